"""write: render the cited report, its coverage table and what stayed uncovered."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from runtime.context import Context
from runtime.models import lead_deadline, load_chat_model
from runtime.structured import message_text, tokens_used
from state.coverage import count_by_value
from state.findings import Finding
from state.graph import ResearchState
from state.plan import CoveragePlan
from state.report import Citation, CoverageRow, Report, RunSummary
from state.tasks import TaskResult

_CITATION = re.compile(r"\[(\d+)\]")
SYNTHESIS_PROMPT = """You write the opening of a research report from numbered
evidence only. In at most four short paragraphs, answer the question. Cite every
statement with the numbers of the evidence it rests on, like [2] or [1][4]; use
no knowledge beyond the evidence. If values listed as not covered matter to the
question, say plainly that the evidence does not cover them. Answer with the
Markdown text only, no heading."""


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
    counts = count_by_value(findings)
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


def number_citations(
    plan: CoveragePlan, findings: list[Finding]
) -> dict[str, Citation]:
    """One citation number per cited passage, in the order the report cites them."""
    citations: dict[str, Citation] = {}
    for finding in sorted(findings, key=lambda f: facet_order(plan, f)):
        key = finding.source.passage_id
        if key not in citations:
            citations[key] = Citation(number=len(citations) + 1, source=finding.source)
    return citations


def facet_order(plan: CoveragePlan, finding: Finding) -> int:
    """Where the finding's first facet stands in the plan."""
    ids = [f.id for f in plan.facets]
    return ids.index(finding.facet_ids[0]) if finding.facet_ids[0] in ids else len(ids)


def keep_valid_citations(text: str, valid: set[int]) -> tuple[str, int]:
    """Remove citation markers that point at no source; count them."""
    dropped = 0

    def check(marker: re.Match[str]) -> str:
        nonlocal dropped
        if int(marker.group(1)) in valid:
            return marker.group(0)
        dropped += 1
        return ""

    return _CITATION.sub(check, text), dropped


async def synthesize(
    model: BaseChatModel,
    question: str,
    findings: list[Finding],
    citations: dict[str, Citation],
    gaps: list[str],
) -> tuple[str, int, int]:
    """The lead's cited synthesis of the verified findings.

    Returns the text, the citation markers dropped, and the tokens used.
    """
    evidence = "\n".join(
        f'[{citations[f.source.passage_id].number}] {f.claim} (quote: "{f.quote}")'
        for f in findings
    )
    missing = ", ".join(gaps) or "none"
    answer = await model.ainvoke(
        [
            SystemMessage(SYNTHESIS_PROMPT),
            HumanMessage(
                f"Question: {question}\n\nEvidence:\n{evidence}\n\n"
                f"Not covered: {missing}"
            ),
        ]
    )
    valid = {c.number for c in citations.values()}
    text, dropped = keep_valid_citations(message_text(answer).strip(), valid)
    return text, dropped, tokens_used(answer)


async def write(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Render the report with numbered citations and its coverage.

    In LLM mode the lead opens it with a cited synthesis; facet sections,
    the coverage table, what stayed uncovered and the sources follow.
    """
    ctx = runtime.context
    plan, findings = state["plan"], state.get("findings", [])
    table = coverage_table(plan, findings, ctx.min_findings_per_value)
    gaps = [r.value for r in table if r.status != "covered"]
    citations = number_citations(plan, findings)
    summary = summarize(state)
    lead_tokens = state.get("lead_tokens", 0)
    covered = len(table) - len(gaps)
    lines = [
        f"# {plan.question}",
        "",
        f"Coverage: {covered} of {len(table)} values ({summary.coverage:.0%}) after "
        f"{summary.rounds} round(s); {summary.tasks} task(s), {summary.findings} "
        f"verified finding(s), {summary.findings_dropped} dropped in verification.",
        "",
    ]
    model = await asyncio.to_thread(load_chat_model, ctx.lead_model)
    if model is not None and findings:
        try:
            async with lead_deadline(ctx.lead_timeout_s, "writing"):
                text, dropped, used = await synthesize(
                    model, plan.question, findings, citations, gaps
                )
        except GraphBubbleUp:
            raise
        except Exception as err:  # noqa: BLE001 - the cited findings still stand
            text, dropped, used = (
                f"_No synthesis: the lead model failed ({err})._",
                0,
                0,
            )
        lead_tokens += used
        summary = summary.model_copy(update={"citations_dropped": dropped})
        lines += ["## Summary", "", text, ""]
    summary = summary.model_copy(
        update={"lead_tokens": lead_tokens, "tokens": summary.tokens + lead_tokens}
    )
    sections = []
    for facet in plan.facets:
        own = [f for f in findings if f.facet_ids[0] == facet.id]
        if own:
            sections.append(facet.title)
            lines += [f"## {facet.title}", ""]
            lines += [
                f"- {f.claim} [{citations[f.source.passage_id].number}]" for f in own
            ]
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
