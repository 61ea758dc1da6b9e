"""`delegator eval`: run a dataset's cases, score each run, print a table, write JSON.

Cases run concurrently (bounded). With `ablation`, each case runs once without
re-delegation and once with it, so the difference re-delegation makes shows.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from evals.datasets import BreadthCase, OutlineCase, knowledge_base_without
from evals.metrics import (
    article_recall,
    citation_precision,
    document_precision,
    duplicate_rate,
    group_coverage,
    heading_soft_recall,
)
from graphs.research import graph
from roles.plan import NothingMatchesError
from roles.verify import verify_findings
from runtime.context import Context
from runtime.kb import KnowledgeBase, knowledge_base
from runtime.local_engine import slots as local_slots
from runtime.models import resolve_spec
from runtime.reliability import describe
from runtime.sources import PassageLookup, Sources
from state.findings import Finding, normalize_text
from state.report import RunSummary
from state.tasks import TaskResult, tool_evidence

Case = BreadthCase | OutlineCase


class CaseScore(BaseModel):
    """One run of one case and its metrics; None where a metric does not apply."""

    case_id: str
    kind: str
    max_rounds: int
    group_coverage: float | None = None
    article_recall: float | None = None
    document_precision: float | None = None
    heading_soft_recall: float | None = None
    citation_precision: float | None = None
    duplicate_rate: float | None = None
    missing_groups: tuple[str, ...] = ()
    tasks: int = 0
    tasks_with_findings: int = 0
    verified_findings: int = 0
    dropped_by_reason: dict[str, int] = {}
    claimed_coverage: float | None = None
    tokens_per_finding: float | None = None
    calls_by_role: dict[str, int] = {}
    tokens_by_role: dict[str, int] = {}
    synthesis_sentences: dict[str, int] = {}
    summary_failure: str | None = None
    wall_seconds: float = 0.0
    stopped: str | None = Field(
        default=None, description="Why delegation ended, as the report says."
    )
    refused: str | None = None
    error: str | None = None


async def final_state(question: str, context: Context) -> dict[str, Any]:
    """Research `question` and return the whole final state."""
    state: dict[str, Any] = {}
    async for values in graph.astream(
        {"question": question}, context=context, stream_mode="values"
    ):
        state = values
    return state


def score(
    case: Case,
    state: dict[str, Any],
    seconds: float,
    rounds: int,
    kb: KnowledgeBase,
) -> CaseScore:
    """The metrics of one finished run, `kb` the knowledge base it ran on."""
    findings = state.get("findings", [])
    cited = {f.source.title for f in findings if f.verified}
    results = list(state.get("results", {}).values())
    offered = [f for r in results for f in r.findings]
    summary = state["report"].summary
    kept = {f.span_key for f in findings if f.verified}
    rounds_measured = state.get("coverage", [])
    common: dict[str, Any] = {
        "case_id": case.id,
        "max_rounds": rounds,
        "citation_precision": citation_precision(
            len(findings), len(findings) + sum(state.get("dropped", {}).values())
        ),
        "duplicate_rate": duplicate_rate(
            [(f.source.passage_id, f.quote, f.claim) for f in offered]
        ),
        "tasks": summary.tasks,
        "tasks_with_findings": tasks_with_verified(
            results, findings, Sources(kb, tool_evidence(results))
        ),
        "verified_findings": len(kept),
        "dropped_by_reason": dropped_by_reason(summary),
        "claimed_coverage": summary.coverage,
        "tokens_per_finding": (
            round(summary.tokens / len(kept), 1) if kept and summary.tokens else None
        ),
        "calls_by_role": summary.calls_by_role,
        "tokens_by_role": summary.tokens_by_role,
        "synthesis_sentences": synthesis_sentences(summary),
        "summary_failure": summary.summary_failure,
        "wall_seconds": round(seconds, 3),
        "stopped": rounds_measured[-1].stopped if rounds_measured else None,
    }
    if isinstance(case, OutlineCase):
        sections = list(state["report"].sections)
        return CaseScore(
            kind="outline",
            heading_soft_recall=heading_soft_recall(case.headings, sections),
            **common,
        )
    return CaseScore(
        kind="breadth",
        group_coverage=group_coverage(case.groups, cited),
        article_recall=article_recall(case.gold, cited),
        document_precision=document_precision(cited, case.gold),
        missing_groups=tuple(
            g for g, titles in case.groups.items() if not cited & set(titles)
        ),
        **common,
    )


def tasks_with_verified(
    results: Sequence[TaskResult], findings: Sequence[Finding], sources: PassageLookup
) -> int:
    """The tasks with a finding that passed verification and stands in the report.

    Verification rewrites what it keeps (a quote becomes its whole sentences,
    a claim that says more becomes its quote, findings on one sentence become
    one), so each task's own findings are checked again, and one counts when
    its evidence lies within a finding the run kept from the same passage.
    """
    kept = [
        (f.source.passage_id, f" {normalize_text(f.quote)} ")
        for f in findings
        if f.verified
    ]

    def stands(finding: Finding) -> bool:
        quote = f" {normalize_text(finding.quote)} "
        return any(p == finding.source.passage_id and quote in q for p, q in kept)

    return sum(
        any(map(stands, verify_findings(r.findings, sources)[0])) for r in results
    )


def synthesis_sentences(summary: RunSummary) -> dict[str, int]:
    """What became of the sentences the lead wrote: kept, recited, cut and why.

    Also how many findings it chose to open the report when none stood. Empty
    when it wrote none (extractive mode, or no finding to write from).
    """
    counts = {
        "kept": summary.sentences_kept,
        "recited": summary.sentences_recited,
        "unsupported": summary.sentences_unsupported,
        "uncited or repeated": summary.sentences_dropped,
        "findings chosen": summary.findings_chosen,
    }
    return counts if any(counts.values()) else {}


def dropped_by_reason(summary: RunSummary) -> dict[str, int]:
    """Findings refused, by why: by a subagent's answer checks, then by `verify`."""
    return dict(Counter(summary.dropped_by_reason) + Counter(summary.refused_by_reason))


async def run_case(case: Case, context: Context, rounds: int) -> CaseScore:
    """Run one case with `rounds` re-delegations and score it; a failure is scored."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="delegator-eval-") as folder:
        try:
            if isinstance(case, OutlineCase):
                kb = await asyncio.to_thread(knowledge_base_without, case, Path(folder))
                context = replace(context, kb_path=str(kb))
            state = await final_state(case.query, replace(context, max_rounds=rounds))
        except NothingMatchesError as refusal:
            return refused(case, rounds, refusal, time.perf_counter() - started)
        except Exception as error:  # noqa: BLE001 - one case's failure is its score
            kind = "outline" if isinstance(case, OutlineCase) else "breadth"
            return CaseScore(
                case_id=case.id, kind=kind, max_rounds=rounds, error=describe(error)
            )
        seconds = time.perf_counter() - started
        ran_on = knowledge_base(context.kb_path)
        return await asyncio.to_thread(score, case, state, seconds, rounds, ran_on)


def refused(
    case: Case, rounds: int, refusal: NothingMatchesError, seconds: float
) -> CaseScore:
    """The score of a run that refused its question: it reached nothing.

    A refusal is an answer, not a failure of the eval: its recall counts as 0
    in the means, and its precision as not applicable.
    """
    common: dict[str, Any] = {
        "case_id": case.id,
        "max_rounds": rounds,
        "refused": describe(refusal),
        "wall_seconds": round(seconds, 3),
    }
    if isinstance(case, OutlineCase):
        return CaseScore(kind="outline", heading_soft_recall=0.0, **common)
    return CaseScore(
        kind="breadth",
        group_coverage=0.0,
        article_recall=0.0,
        missing_groups=tuple(case.groups),
        **common,
    )


def cases_at_once(context: Context, asked: int) -> int:
    """`asked`, but no more cases than a local engine the run uses serves at once.

    Cases beyond its slots would queue at the engine, and a lead's deadline
    (planning within `lead_timeout_s`) would count the wait behind another
    case's calls.
    """
    roles = (context.model("lead"), context.model("subagent"))
    if any(resolve_spec(role.spec).startswith("local:") for role in roles):
        return max(1, min(asked, local_slots()))
    return max(1, asked)


async def evaluate(
    cases: Sequence[Case],
    context: Context,
    *,
    ablation: bool,
    concurrency: int,
    console: Console | None,
) -> list[CaseScore]:
    """Every case (twice with `ablation`: without and with re-delegation)."""
    rounds = [0, context.max_rounds] if ablation else [context.max_rounds]
    jobs = [(case, r) for case in cases for r in rounds]
    slots = asyncio.Semaphore(cases_at_once(context, concurrency))
    progress = Progress(
        TextColumn("eval"), BarColumn(), MofNCompleteColumn(), console=console
    )
    bar = progress.add_task("eval", total=len(jobs))

    async def one(case: Case, r: int) -> CaseScore:
        async with slots:
            scored = await run_case(case, context, r)
        progress.advance(bar)
        return scored

    if console is not None:
        progress.start()
    try:
        return list(await asyncio.gather(*(one(c, r) for c, r in jobs)))
    finally:
        progress.stop()


COLUMNS = (
    ("group_coverage", "groups"),
    ("article_recall", "article recall"),
    ("document_precision", "doc precision"),
    ("heading_soft_recall", "heading recall"),
    ("citation_precision", "citation precision"),
    ("duplicate_rate", "duplicates"),
)


def table(scores: Sequence[CaseScore]) -> Table:
    """One row per run, and a mean row per number of re-delegation rounds.

    Beside the metrics: tasks (and those with a verified finding), verified
    findings, the coverage the report claims, tokens per verified finding,
    wall time, and the findings refused by reason.
    """
    shown = [
        (k, t) for k, t in COLUMNS if any(getattr(s, k) is not None for s in scores)
    ]
    grid = Table(
        "case",
        "rounds",
        *(t for _, t in shown),
        "tasks",
        "verified",
        "claimed",
        "tokens/found",
        "s",
        "note",
    )
    for s in scores:
        grid.add_row(
            s.case_id,
            str(s.max_rounds),
            *(_number(getattr(s, k)) for k, _ in shown),
            f"{s.tasks_with_findings}/{s.tasks}",
            str(s.verified_findings),
            _number(s.claimed_coverage),
            _number(s.tokens_per_finding, "{:.0f}"),
            f"{s.wall_seconds:.1f}",
            s.error or (f"refused: {s.refused}" if s.refused else _reasons(s)),
        )
    for rounds in sorted({s.max_rounds for s in scores}):
        group = [s for s in scores if s.max_rounds == rounds and s.error is None]
        grid.add_row(
            "mean",
            str(rounds),
            *(_number(mean([getattr(s, k) for s in group])) for k, _ in shown),
            f"{sum(s.tasks_with_findings for s in group)}/"
            f"{sum(s.tasks for s in group)}",
            str(sum(s.verified_findings for s in group)),
            _number(mean([s.claimed_coverage for s in group])),
            _number(mean([s.tokens_per_finding for s in group]), "{:.0f}"),
            f"{sum(s.wall_seconds for s in group):.1f}",
            f"{sum(s.refused is not None for s in group)} refused, "
            f"{len([s for s in scores if s.max_rounds == rounds]) - len(group)} failed",
        )
    return grid


def _reasons(score: CaseScore) -> str:
    """The refused findings of a run, by reason, most frequent first."""
    ranked = sorted(score.dropped_by_reason.items(), key=lambda kv: -kv[1])
    return "; ".join(f"{n} {reason}" for reason, n in ranked)


def mean(values: Sequence[float | None]) -> float | None:
    """The mean of the values given, None if there are none."""
    given = [v for v in values if v is not None]
    return sum(given) / len(given) if given else None


def _number(value: float | None, form: str = "{:.2f}") -> str:
    return "-" if value is None else form.format(value)
