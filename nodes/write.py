"""write: render the cited report, its coverage table and what stayed uncovered."""

from __future__ import annotations

from collections import Counter, defaultdict

from langgraph.runtime import Runtime

from runtime.context import Context
from state.findings import Finding
from state.graph import ResearchState
from state.plan import CoveragePlan
from state.report import Citation, CoverageRow, Report, RunSummary
from state.tasks import TaskResult


def summarize(state: ResearchState) -> RunSummary:
    """The run's numbers, computed from its results and coverage history."""
    results = list(state.get("results", {}).values())
    gaps = state.get("gaps", [])
    slowest: dict[int, float] = defaultdict(float)
    for r in results:
        slowest[r.round] = max(slowest[r.round], r.execution_time_s)
    return RunSummary(
        tasks=len(results),
        failures=sum(r.status == "failed" for r in results),
        rounds=len(slowest),
        coverage=gaps[-1].coverage if gaps else 0.0,
        findings=len(state.get("findings", [])),
        findings_dropped=state.get("dropped", 0),
        tokens=sum(r.tokens for r in results),
        subagent_seconds=round(sum(r.execution_time_s for r in results), 3),
        critical_path_seconds=round(sum(slowest.values()), 3),
    )


def coverage_table(
    plan: CoveragePlan, findings: list[Finding], need: int
) -> list[CoverageRow]:
    """One row per plan value: its facet, its verified findings, its status."""
    counts = Counter(v for f in findings for v in f.values)
    rows = []
    for value in plan.values:
        owner = plan.owner(value)
        n = counts[value]
        status = "covered" if n >= need else "weak" if n else "not covered"
        rows.append(
            CoverageRow(
                value=value,
                facet=owner.title if owner else "-",
                findings=n,
                status=status,
            )
        )
    return rows


def why_uncovered(value: str, results: list[TaskResult]) -> str:
    """A short reason a value stayed uncovered."""
    tried = [r for r in results if value in r.values]
    if not tried:
        return "found by the coverage check; not delegated (round or task limit)"
    errors = [e for r in tried for e in r.errors]
    detail = f"; last error: {errors[-1]}" if errors else ""
    return f"no verified finding after {len(tried)} task(s){detail}"


def write(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Render the report: facet sections with numbered citations, then coverage."""
    plan, findings = state["plan"], state.get("findings", [])
    table = coverage_table(plan, findings, runtime.context.min_findings_per_value)
    summary = summarize(state)
    citations: dict[str, Citation] = {}

    def cite(finding: Finding) -> int:
        key = finding.source.passage_id
        if key not in citations:
            citations[key] = Citation(number=len(citations) + 1, source=finding.source)
        return citations[key].number

    lines = [f"# {plan.question}", ""]
    covered = sum(r.status == "covered" for r in table)
    lines += [
        f"Coverage: {covered} of {len(table)} values ({summary.coverage:.0%}) after "
        f"{summary.rounds} round(s); {summary.tasks} task(s), {summary.findings} "
        f"verified finding(s), {summary.findings_dropped} dropped in verification.",
        "",
    ]
    sections = []
    for facet in plan.facets:
        own = [f for f in findings if f.facet_ids[0] == facet.id]
        if not own:
            continue
        sections.append(facet.title)
        lines += [f"## {facet.title}", ""]
        lines += [f"- {f.claim} [{cite(f)}]" for f in own]
        lines.append("")
    lines += [
        "## Coverage",
        "",
        "| Value | Facet | Findings | Status |",
        "| --- | --- | ---: | --- |",
    ]
    lines += [
        f"| {_cell(r.value)} | {_cell(r.facet)} | {r.findings} | {r.status} |"
        for r in table
    ]
    lines.append("")
    gaps = [r.value for r in table if r.status != "covered"]
    if gaps:
        results = list(state.get("results", {}).values())
        lines += ["## Not covered", ""]
        lines += [f"- **{v}**: {why_uncovered(v, results)}" for v in gaps]
        lines.append("")
    lines += ["## Sources", ""]
    for c in citations.values():
        link = f" <{c.source.url}>" if c.source.url else ""
        lines.append(f"{c.number}. {c.source.title}, {c.source.section}{link}")
    report = Report(
        markdown="\n".join(lines).rstrip() + "\n",
        sections=tuple(sections),
        citations=tuple(citations.values()),
        coverage_table=tuple(table),
        unresolved_gaps=tuple(gaps),
        summary=summary,
    )
    return {"report": report}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
