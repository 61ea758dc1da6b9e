"""Write: the Markdown report, numbered citations and what stayed uncovered."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

from runtime.text import printable
from state.findings import Finding
from state.plan import CoveragePlan
from state.report import Citation, CoverageRow, RunSummary
from state.tasks import TaskResult

_LINK = re.compile(r"\](?=[(:])")
_WEB = re.compile(r"https?://[^\s<>\"']+")
_AUTOLINK = re.compile(r"(?i)(?<=https)(?=://)|(?<=http)(?=://)|(?<=\bwww)(?=\.)")


def number_citations(
    plan: CoveragePlan, findings: Sequence[Finding]
) -> dict[str, Citation]:
    """One citation number per cited passage, in the order the report cites them."""
    order = {f.id: n for n, f in enumerate(plan.facets)}

    def facet_order(finding: Finding) -> int:
        return order.get(home_facet(plan, finding), len(order))

    citations: dict[str, Citation] = {}
    for finding in sorted(findings, key=facet_order):
        key = finding.source.passage_id
        if key not in citations:
            citations[key] = Citation(number=len(citations) + 1, source=finding.source)
    return citations


def why_uncovered(
    value: str,
    results: Sequence[TaskResult],
    blocked: dict[str, str] | None = None,
    stopped: str | None = None,
) -> str:
    """A short reason a value stayed uncovered.

    A value never sent is told by why delegation stopped (`stopped`) when known:
    a round that added no verified finding ends delegation for values not yet
    sent too.
    """
    tried = [r for r in results if value in r.values]
    if blocked and value in blocked:
        return f"not sent: {blocked[value]}"
    if not tried:
        return f"not delegated: {stopped}" if stopped else "not delegated"
    errors = [e for r in tried for e in r.errors]
    detail = f"; last error: {errors[-1]}" if errors else ""
    return f"no verified finding after {len(tried)} task(s){detail}"


def render_markdown(
    plan: CoveragePlan,
    findings: Sequence[Finding],
    citations: dict[str, Citation],
    table: Sequence[CoverageRow],
    summary: RunSummary,
    results: Sequence[TaskResult],
    synthesis: str | None,
    stopped: str | None,
    blocked: dict[str, str] | None = None,
) -> str:
    """The report, section by section.

    Coverage line, synthesis, facet sections, coverage table, failed tasks,
    what stayed uncovered and why, sources.
    """
    gaps = [r.value for r in table if r.status != "covered"]
    lines = [f"# {inert(plan.question)}", ""]
    if summary.incomplete:
        lines += [
            f"**Incomplete run:** {inert(summary.incomplete)}. Only what was verified "
            "is reported.",
            "",
        ]
    lines += [coverage_line(table, summary, plan), ""]
    if synthesis is not None:
        lines += ["## Summary", "", inert(synthesis), ""]
    for title, own in facet_sections(plan, findings):
        lines += [f"## {inert(title)}", ""]
        lines += [
            f"- {inert(f.claim)} [{citations[f.source.passage_id].number}]" for f in own
        ]
        lines.append("")
    if table:
        lines += [
            "## Coverage",
            "",
            "| Value | Dimension | Facet | Findings | Status |",
            "| --- | --- | --- | ---: | --- |",
        ]
        lines += [
            f"| {_cell(r.value)} | {_cell(r.dimension)} | {_cell(r.facet)} "
            f"| {r.findings} | {r.status} |"
            for r in table
        ]
        lines.append("")
    lines += failed_tasks(results, gaps)
    if gaps:
        lines += ["## Not covered", ""]
        if stopped:
            lines += [f"Delegation stopped: {inert(stopped)}.", ""]
        lines += [
            f"- **{inert(v)}**: {inert(why_uncovered(v, results, blocked, stopped))}"
            for v in gaps
        ]
        lines.append("")
    if citations:
        lines += ["## Sources", ""]
        for c in citations.values():
            link = f" <{c.source.url}>" if is_web_link(c.source.url) else ""
            lines.append(
                f"{c.number}. {inert(c.source.title)}, {inert(c.source.section)}{link}"
            )
    return "\n".join(lines).rstrip() + "\n"


def failed_tasks(results: Sequence[TaskResult], gaps: Sequence[str]) -> list[str]:
    """The failed tasks, why they failed and the values left uncovered with them."""
    failed = sorted(
        (r for r in results if r.status == "failed"), key=lambda r: (r.round, r.task_id)
    )
    if not failed:
        return []
    lines = [
        "## Failed tasks",
        "",
        "| Round | Agent | Values it leaves uncovered | Attempts | Why |",
        "| ---: | --- | --- | ---: | --- |",
    ]
    for r in failed:
        lost = ", ".join(v for v in r.values if v in gaps) or "none (covered later)"
        why = "; ".join(r.errors) or r.failure or "no reason given"
        lines.append(
            f"| {r.round} | {_cell(r.agent_id)} | {_cell(lost)} | {r.attempts} "
            f"| {_cell(why)} |"
        )
    return [*lines, ""]


def coverage_line(
    table: Sequence[CoverageRow], summary: RunSummary, plan: CoveragePlan
) -> str:
    """What the run covered and what its values are, and what it cost."""
    work = (
        f"{summary.tasks} task(s), {summary.findings} verified finding(s), "
        f"{summary.findings_dropped} dropped in verification"
        f"{_reasons(summary.dropped_by_reason)}{_refused(summary)}."
    )
    why = (
        f" The knowledge base planned because {plan.fallback}." if plan.fallback else ""
    )
    if not table and not summary.findings:
        return (
            f"No answer: no verified evidence was found for this question; {work}{why}"
        )
    if not table:
        return (
            "Answered directly: no dimension values were planned or found, so "
            f"there is no coverage to report; {work}{why}"
        )
    covered = sum(r.status == "covered" for r in table)
    share = covered / len(table)
    line = (
        f"Coverage: {covered} of {len(table)} values ({share:.0%}) after "
        f"{summary.rounds} round(s); {work}"
    )
    if plan.planned_by == "corpus":
        line += (
            " The values are the documents and sections the knowledge-base search "
            "matched (extractive plan), not dimensions of the answer: this counts "
            "what was found, not how much of the question it answers."
        )
    return line + why


def facet_sections(
    plan: CoveragePlan, findings: Sequence[Finding]
) -> list[tuple[str, list[Finding]]]:
    """Each facet with findings, by title: the findings at home in it.

    Findings of no plan facet (the lead's direct answer) come first, as "Answer".
    """
    by_facet: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_facet[home_facet(plan, finding)].append(finding)
    facets = {f.id for f in plan.facets}
    answer = [f for fid, own in by_facet.items() if fid not in facets for f in own]
    sections = [("Answer", answer)] if answer else []
    sections += [(f.title, by_facet[f.id]) for f in plan.facets if by_facet.get(f.id)]
    return sections


def home_facet(plan: CoveragePlan, finding: Finding) -> str:
    """The facet a finding is listed under: the first of its that owns its value.

    A finding two tasks brought lists both their facets; it belongs under the
    one whose value it covers, not under the one that happened to find it
    first. With no such facet, it is listed under its first.
    """
    owned = {f.id: set(f.values) for f in plan.facets}
    covering = [
        fid for fid in finding.facet_ids if owned.get(fid, set()) & set(finding.values)
    ]
    return (covering or list(finding.facet_ids))[0]


def _reasons(by_reason: Mapping[str, int]) -> str:
    reasons = by_reason.items()
    return f" ({'; '.join(f'{why}: {n}' for why, n in reasons)})" if reasons else ""


def _refused(summary: RunSummary) -> str:
    refused = sum(summary.refused_by_reason.values())
    if not refused:
        return ""
    return f", {refused} refused before it{_reasons(summary.refused_by_reason)}"


def inert(text: str) -> str:
    """Text from the knowledge base or a model, made safe to place in Markdown.

    It is shown as text: `<` is escaped, so no tag (`<script>`, `<img>`) or
    autolink renders; a bracket before a parenthesis or a colon is
    escaped, so no link, image or link definition forms; a bare address
    (`https://...`, `www.`) is broken with an escape, so no renderer links it;
    control characters are dropped.
    """
    text = printable(text).replace("<", "&lt;")
    return _AUTOLINK.sub("\\\\", _LINK.sub(r"\\\g<0>", text))


def is_web_link(url: str | None) -> bool:
    """Whether `url` is a plain http(s) address, the only links a report shows."""
    return bool(url) and _WEB.fullmatch(url or "") is not None


def _cell(text: str) -> str:
    return inert(" ".join(text.split())).replace("|", "\\|")
