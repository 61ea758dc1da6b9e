"""The report page as data: coverage by round, the task timeline and the evidence."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from roles.render import coverage_line, is_web_link, number_citations
from roles.verify import locate
from state.coverage import RoundCoverage
from state.findings import Finding, normalize_text
from state.plan import CoveragePlan
from state.result import RunResult
from state.tasks import TaskResult

CellState = Literal["not planned yet", "covered", "weak", "failed", "uncovered"]
Outcome = Literal["failed", "escalated", "retried", "partial", "success"]
BlockKind = Literal["heading", "paragraph", "bullets", "numbered", "table"]

_HEADING = re.compile(r"(#{1,6})\s+(.*)")
_BULLET = re.compile(r"[-*]\s+(.*)")
_NUMBERED = re.compile(r"(\d+)\.\s+(.*)")
_RULE = re.compile(r"\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?")
_PIPE = re.compile(r"(?<!\\)\|")


class Cell(BaseModel):
    """The state of one value after one round."""

    model_config = ConfigDict(frozen=True)

    state: CellState
    findings: int = 0
    reason: str | None = None


class MatrixRow(BaseModel):
    """One value of the coverage table, round by round, and its dimension."""

    model_config = ConfigDict(frozen=True)

    value: str
    cells: tuple[Cell, ...]
    group: str = ""


class Matrix(BaseModel):
    """Coverage by value and round: the coverage table's rows, the run's rounds.

    Rows are grouped by dimension (in a corpus plan, the kind of document), in
    the order of each group's first value.
    """

    model_config = ConfigDict(frozen=True)

    rounds: tuple[int, ...]
    rows: tuple[MatrixRow, ...]


class Bar(BaseModel):
    """One task on the timeline, in seconds from the earliest task's start."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    round: int
    agent: str
    facet: str
    outcome: Outcome
    start_s: float
    duration_s: float
    tokens: int
    attempts: int


class Evidence(BaseModel):
    """A verified finding with its numbered source and the passage it quotes.

    The passage is `before + marked + after`; `marked` is empty when the quote
    was not found in it.
    """

    model_config = ConfigDict(frozen=True)

    number: int
    claim: str
    quote: str
    title: str
    section: str
    url: str | None
    before: str
    marked: str
    after: str


class Block(BaseModel):
    """A block of the report's Markdown: its inline text is still Markdown."""

    model_config = ConfigDict(frozen=True)

    kind: BlockKind
    level: int = 0
    text: str = ""
    items: tuple[str, ...] = ()
    start: int = 1
    rows: tuple[tuple[str, ...], ...] = ()


class ReportPage(BaseModel):
    """Everything the report page shows."""

    model_config = ConfigDict(frozen=True)

    question: str
    coverage_line: str
    matrix: Matrix
    bars: tuple[Bar, ...]
    evidence: tuple[Evidence, ...]
    report: tuple[Block, ...]


class EvalMetric(BaseModel):
    """One metric of a case, without and with re-delegation."""

    model_config = ConfigDict(frozen=True)

    label: str
    without: float | None
    redelegated: float | None
    digits: int = 2


class EvalRun(BaseModel):
    """One run of a case: its rounds, the groups it missed, a refusal or error."""

    model_config = ConfigDict(frozen=True)

    max_rounds: int
    missing_groups: tuple[str, ...] = ()
    refused: str | None = None
    error: str | None = None


class EvalCase(BaseModel):
    """A case's runs with no re-delegation and with the most rounds."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    kind: str
    without: EvalRun | None
    redelegated: EvalRun | None
    metrics: tuple[EvalMetric, ...]


class EvalPage(BaseModel):
    """Every case of an eval."""

    model_config = ConfigDict(frozen=True)

    cases: tuple[EvalCase, ...]


EVAL_METRICS = (
    ("group_coverage", "group coverage", 2),
    ("article_recall", "article recall", 2),
    ("document_precision", "document precision", 2),
    ("heading_soft_recall", "heading soft recall", 2),
    ("citation_precision", "citation precision", 2),
    ("duplicate_rate", "duplicate rate", 2),
    ("tasks", "tasks", 0),
    ("wall_seconds", "seconds", 1),
)
"""The metrics an eval page shows: key, label and decimals."""


def report_page_model(result: RunResult) -> ReportPage:
    """The page of a run, from the result the CLI writes with `--json`."""
    verified = [f for f in result.findings if f.verified]
    return ReportPage(
        question=result.question,
        coverage_line=coverage_line(result.coverage_table, result.summary, result.plan),
        matrix=coverage_matrix(
            [(r.value, r.dimension) for r in result.coverage_table],
            result.coverage,
            result.tasks,
            verified,
        ),
        bars=timeline(result.tasks),
        evidence=evidence(result.plan, verified, result.passages),
        report=markdown_blocks(result.report),
    )


def coverage_matrix(
    values: Sequence[tuple[str, str]],
    rounds: Sequence[RoundCoverage],
    tasks: Sequence[TaskResult],
    findings: Sequence[Finding],
) -> Matrix:
    """The state of each (value, dimension) after each round, by dimension.

    A value an enumeration added in a round is not planned yet before it. A
    covered or weak value counts the verified findings found up to the round;
    a value whose task of the round failed carries the task's first error.
    """
    added: dict[str, int] = {}
    for coverage in rounds:
        for value in coverage.new_values:
            added.setdefault(value, coverage.round)
    found = list(zip(findings, finding_rounds(findings, tasks), strict=True))
    failed = [t for t in tasks if t.status == "failed"]

    def count(value: str, n: int) -> int:
        return sum(value in f.values and r <= n for f, r in found)

    def cell(value: str, coverage: RoundCoverage) -> Cell:
        n = coverage.round
        lost = [t for t in failed if t.round == n and value in t.values]
        if added.get(value, n) > n:
            return Cell(state="not planned yet")
        if value in coverage.covered:
            return Cell(state="covered", findings=count(value, n))
        if lost:
            return Cell(state="failed", reason=failure_reason(lost[0]))
        if value in coverage.weak:
            return Cell(state="weak", findings=count(value, n))
        return Cell(state="uncovered")

    groups = list(dict.fromkeys(group for _, group in values))
    grouped = sorted(values, key=lambda pair: groups.index(pair[1]))
    return Matrix(
        rounds=tuple(c.round for c in rounds),
        rows=tuple(
            MatrixRow(value=v, group=g, cells=tuple(cell(v, c) for c in rounds))
            for v, g in grouped
        ),
    )


def finding_rounds(
    findings: Sequence[Finding], tasks: Iterable[TaskResult]
) -> list[int]:
    """The round each finding was found in, in order.

    It is the earliest round of a task that claimed the same span (passage
    and quote); a finding no task claimed (the lead's own answer) counts from
    the start.
    """
    first: dict[tuple[str, str], int] = {}
    for task in tasks:
        for claimed in task.findings:
            key = _span(claimed)
            first[key] = min(first.get(key, task.round), task.round)
    return [first.get(_span(f), -1) for f in findings]


def failure_reason(task: TaskResult) -> str:
    """Why a task failed: its first error, else its kind of failure."""
    return task.errors[0] if task.errors else task.failure or "no reason given"


def outcome(task: TaskResult) -> Outcome:
    """How a task ended, as the timeline colours it."""
    if task.status == "failed":
        return "failed"
    if task.escalation is not None:
        return "escalated"
    if task.attempts > 1:
        return "retried"
    return task.status


def timeline(tasks: Sequence[TaskResult]) -> tuple[Bar, ...]:
    """One bar per task, by round and start, timed from the earliest start."""
    if not tasks:
        return ()
    origin = min(t.started_at for t in tasks)
    ordered = sorted(tasks, key=lambda t: (t.round, t.started_at, t.task_id))
    return tuple(
        Bar(
            task_id=t.task_id,
            round=t.round,
            agent=t.agent_id,
            facet=", ".join(t.values),
            outcome=outcome(t),
            start_s=(t.started_at - origin).total_seconds(),
            duration_s=t.execution_time_s,
            tokens=t.tokens,
            attempts=t.attempts,
        )
        for t in ordered
    )


def evidence(
    plan: CoveragePlan, findings: Sequence[Finding], passages: Mapping[str, str]
) -> tuple[Evidence, ...]:
    """Each verified finding with its passage, numbered as the report cites them."""
    citations = number_citations(plan, findings)
    shown = []
    for finding in findings:
        source = finding.source
        before, marked, after = split_passage(
            passages.get(source.passage_id, ""), finding.quote
        )
        shown.append(
            Evidence(
                number=citations[source.passage_id].number,
                claim=finding.claim,
                quote=finding.quote,
                title=source.title,
                section=source.section,
                url=source.url if is_web_link(source.url) else None,
                before=before,
                marked=marked,
                after=after,
            )
        )
    return tuple(sorted(shown, key=lambda e: e.number))


def split_passage(passage: str, quote: str) -> tuple[str, str, str]:
    """The passage before the quote, the quote as the passage has it, and after.

    Case and white space aside, the quote must appear verbatim (found as
    verification finds it); if it does not, the whole passage comes first and
    the other two are empty.
    """
    span = locate(quote, passage)
    if span is None:
        return passage, "", ""
    start, end = span
    return passage[:start], passage[start:end], passage[end:]


def markdown_blocks(markdown: str) -> tuple[Block, ...]:
    """The report's headings, paragraphs, lists and tables, in order."""
    blocks: list[Block] = []
    for chunk in re.split(r"\n[ \t]*\n", markdown.strip()):
        lines = [line.strip() for line in chunk.splitlines() if line.strip()]
        heading = _HEADING.fullmatch(lines[0]) if lines else None
        if heading:
            blocks.append(Block(kind="heading", level=len(heading[1]), text=heading[2]))
            lines = lines[1:]
        if not lines:
            continue
        numbered = _NUMBERED.fullmatch(lines[0])
        if all(line.startswith("|") for line in lines):
            rows = (_cells(line) for line in lines if not _RULE.fullmatch(line))
            blocks.append(Block(kind="table", rows=tuple(rows)))
        elif _BULLET.fullmatch(lines[0]):
            blocks.append(Block(kind="bullets", items=_items(lines, _BULLET, 1)))
        elif numbered:
            blocks.append(
                Block(
                    kind="numbered",
                    items=_items(lines, _NUMBERED, 2),
                    start=int(numbered[1]),
                )
            )
        else:
            blocks.append(Block(kind="paragraph", text=" ".join(lines)))
    return tuple(blocks)


def eval_page_model(scores: Sequence[Mapping[str, Any]]) -> EvalPage:
    """Each case's metrics with no re-delegation beside those with the most rounds."""
    by_case: dict[str, list[Mapping[str, Any]]] = {}
    for score in scores:
        by_case.setdefault(score["case_id"], []).append(score)
    cases = []
    for case_id, runs in by_case.items():
        without = next((s for s in runs if s["max_rounds"] == 0), None)
        most = max(runs, key=lambda s: int(s["max_rounds"]))
        redelegated = most if most["max_rounds"] > 0 else None
        cases.append(
            EvalCase(
                case_id=case_id,
                kind=runs[0].get("kind", ""),
                without=_run(without),
                redelegated=_run(redelegated),
                metrics=tuple(
                    EvalMetric(
                        label=label,
                        without=without.get(key) if without else None,
                        redelegated=redelegated.get(key) if redelegated else None,
                        digits=digits,
                    )
                    for key, label, digits in EVAL_METRICS
                ),
            )
        )
    return EvalPage(cases=tuple(cases))


def _run(score: Mapping[str, Any] | None) -> EvalRun | None:
    if score is None:
        return None
    return EvalRun(
        max_rounds=score["max_rounds"],
        missing_groups=tuple(score.get("missing_groups", ())),
        refused=score.get("refused"),
        error=score.get("error"),
    )


def _span(finding: Finding) -> tuple[str, str]:
    return finding.source.passage_id, normalize_text(finding.quote)


def _cells(line: str) -> tuple[str, ...]:
    cells = _PIPE.split(line)[1:]
    if cells and not cells[-1].strip():
        cells.pop()
    return tuple(c.strip() for c in cells)


def _items(
    lines: Sequence[str], marker: re.Pattern[str], group: int
) -> tuple[str, ...]:
    """List items; a line with no marker continues the item before it."""
    items: list[str] = []
    for line in lines:
        match = marker.fullmatch(line)
        if match or not items:
            items.append(match[group] if match else line)
        else:
            items[-1] += " " + line
    return tuple(items)
