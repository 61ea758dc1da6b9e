"""The final report and the numbers behind it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from state.circuit import Breaker
from state.coverage import RoundCoverage, ValueStatus, count_by_value, status_of
from state.findings import Finding, Source
from state.plan import CoveragePlan
from state.tasks import TaskResult
from state.usage import Usage


class CoverageRow(BaseModel):
    """One row of the coverage table."""

    model_config = ConfigDict(frozen=True)

    value: str
    dimension: str
    facet: str
    findings: int
    status: ValueStatus


def coverage_table(
    plan: CoveragePlan, findings: Iterable[Finding], need: int
) -> list[CoverageRow]:
    """One row per plan value: its facet, its verified findings, its status."""
    counts = count_by_value(findings)
    rows, owners = [], plan.owners()
    dimensions = {v: d.name for d in reversed(plan.dimensions) for v in d.values}
    for value in plan.values:
        owner = owners.get(value)
        rows.append(
            CoverageRow(
                value=value,
                dimension=dimensions[value],
                facet=owner.title if owner else "-",
                findings=counts[value],
                status=status_of(counts[value], need),
            )
        )
    return rows


class Citation(BaseModel):
    """A numbered reference of the report."""

    model_config = ConfigDict(frozen=True)

    number: int
    source: Source


class RunSummary(BaseModel):
    """What the run cost and did, computed from its events and results."""

    model_config = ConfigDict(frozen=True)

    tasks: int = Field(default=0, description="Tasks launched.")
    succeeded: int = Field(
        default=0, description="Tasks that returned (success or partial)."
    )
    failures: int = 0
    retries: int = Field(default=0, description="Attempts past each task's first.")
    escalations: int = Field(default=0, description="Tasks escalated to a person.")
    open_circuits: tuple[str, ...] = Field(
        default=(), description="Agents whose circuit breaker ended open."
    )
    rounds: int = 0
    coverage: float | None = Field(
        default=None, description="Share of values covered; None with no values."
    )
    coverage_by_round: tuple[float | None, ...] = Field(
        default=(), description="The share covered after each round."
    )
    findings: int = 0
    findings_dropped: int = Field(default=0, description="Failed verification.")
    dropped_by_reason: dict[str, int] = Field(
        default_factory=dict, description="Findings that failed verification, by why."
    )
    refused_by_reason: dict[str, int] = Field(
        default_factory=dict,
        description="Claimed findings a subagent's answer checks refused before "
        "verification (an evidence handle never shown, a sentence out of range), "
        "by why.",
    )
    sentences_kept: int = Field(
        default=0, description="Synthesis sentences that stood, in LLM mode."
    )
    citations_dropped: int = Field(
        default=0, description="Synthesis citation markers that named no source."
    )
    sentences_dropped: int = Field(
        default=0,
        description="Synthesis sentences that cited no source or repeated one kept.",
    )
    sentences_unsupported: int = Field(
        default=0,
        description="Synthesis sentences that neither the findings they cite nor "
        "any other finding support.",
    )
    sentences_recited: int = Field(
        default=0,
        description="Synthesis sentences cited to the finding that says them, in "
        "place of the findings they named.",
    )
    findings_chosen: int = Field(
        default=0,
        description="Findings the lead chose to open the report, as no sentence "
        "of its synthesis stood.",
    )
    summary_failure: str | None = Field(
        default=None,
        description="Why the report has no summary though the lead was asked: "
        "its call failed, or it chose no finding.",
    )
    tokens: int = Field(default=0, description="All model tokens of the run.")
    tokens_by_role: dict[str, int] = Field(
        default_factory=dict,
        description="Tokens of the lead (plan, enumerate, write), the verifier "
        "and the subagents.",
    )
    calls_by_role: dict[str, int] = Field(
        default_factory=dict,
        description="Model calls of the lead, verifier, subagents.",
    )
    tokens_by_round: dict[str, int] = Field(
        default_factory=dict, description="Subagent tokens of each round."
    )
    parent_context_tokens: int = Field(
        default=0, description="The largest prompt the lead model saw, in tokens."
    )
    all_in_one_context_tokens: int = Field(
        default=0,
        description="What one model doing every subagent's work itself would have "
        "held: the lead's largest prompt plus every subagent's largest.",
    )
    subagent_seconds: float = Field(default=0.0, description="Sum over all tasks.")
    critical_path_seconds: float = Field(
        default=0.0, description="Sum over rounds of the slowest task."
    )
    wall_seconds: float = Field(default=0.0, description="From planning to the report.")
    incomplete: str | None = Field(
        default=None,
        description="Why the run did not complete as asked (every task failed, "
        "the model endpoint was lost, no finding verified, a circuit opened, the "
        "verifier failed); None when it did.",
    )

    @classmethod
    def of(
        cls,
        results: Sequence[TaskResult],
        coverage: Sequence[RoundCoverage],
        *,
        findings: int,
        dropped: dict[str, int],
        lead: Usage,
        refused: dict[str, int] | None = None,
        citations_dropped: int,
        sentences_dropped: int,
        sentences_kept: int = 0,
        sentences_unsupported: int = 0,
        sentences_recited: int = 0,
        findings_chosen: int = 0,
        summary_failure: str | None = None,
        lead_unreachable: bool = False,
        breakers: dict[str, Breaker] | None = None,
        verifier: Usage | None = None,
        fact_check_failure: str | None = None,
        wall_seconds: float = 0.0,
    ) -> RunSummary:
        """The run's numbers, from its results and coverage history."""
        slowest: dict[int, float] = defaultdict(float)
        by_round: dict[str, int] = defaultdict(int)
        for r in results:
            slowest[r.round] = max(slowest[r.round], r.execution_time_s)
            by_round[str(r.round)] += r.tokens
        opened = tuple(a for a, b in (breakers or {}).items() if b.open)
        verifier = verifier or Usage()
        return cls(
            tasks=len(results),
            succeeded=sum(r.status != "failed" for r in results),
            coverage_by_round=tuple(c.coverage for c in coverage),
            calls_by_role={
                "lead": lead.calls,
                "verifier": verifier.calls,
                "subagents": sum(r.calls for r in results),
            },
            wall_seconds=round(wall_seconds, 3),
            failures=sum(r.status == "failed" for r in results),
            retries=sum(r.attempts - 1 for r in results),
            escalations=sum(r.escalation is not None for r in results),
            open_circuits=opened,
            tokens_by_round=dict(sorted(by_round.items(), key=lambda kv: int(kv[0]))),
            rounds=len(slowest),
            coverage=coverage[-1].coverage if coverage else None,
            findings=findings,
            findings_dropped=sum(dropped.values()),
            dropped_by_reason=dropped,
            refused_by_reason=refused or {},
            sentences_kept=sentences_kept,
            citations_dropped=citations_dropped,
            sentences_dropped=sentences_dropped,
            sentences_unsupported=sentences_unsupported,
            sentences_recited=sentences_recited,
            findings_chosen=findings_chosen,
            summary_failure=summary_failure,
            tokens=sum(r.tokens for r in results) + lead.tokens + verifier.tokens,
            tokens_by_role={
                "lead": lead.tokens,
                "verifier": verifier.tokens,
                "subagents": sum(r.tokens for r in results),
            },
            parent_context_tokens=lead.context,
            all_in_one_context_tokens=lead.context
            + sum(r.context_tokens for r in results),
            subagent_seconds=round(sum(r.execution_time_s for r in results), 3),
            critical_path_seconds=round(sum(slowest.values()), 3),
            incomplete=incomplete_reason(
                results, findings, lead_unreachable, opened, fact_check_failure
            ),
        )


def incomplete_reason(
    results: Sequence[TaskResult],
    verified: int,
    lead_unreachable: bool,
    open_circuits: Sequence[str] = (),
    fact_check_failure: str | None = None,
) -> str | None:
    """Why a run did not complete, or None.

    Every task failed, its endpoint was lost, tasks ran but not one finding
    passed verification, an agent failed so often that its circuit opened, or
    the verifier asked for stopped before it judged every finding.
    """
    failed = [r for r in results if r.status == "failed"]
    if results and len(failed) == len(results):
        first = failed[0].errors[0] if failed[0].errors else "no reason given"
        return f"every task failed ({len(failed)} of {len(results)}; first: {first})"
    lost = sum(r.failure == "unreachable" for r in failed)
    if lost:
        return (
            f"the model endpoint became unreachable: {lost} of {len(results)} "
            "task(s) could not reach it"
        )
    if results and not verified:
        return (
            f"no finding passed verification: {len(results)} task(s) ran and "
            "none brought evidence that checks out"
        )
    if lead_unreachable:
        return "the lead's model endpoint became unreachable while writing"
    if open_circuits:
        return (
            f"the circuit of {', '.join(open_circuits)} opened after failures in a "
            "row; their later tasks went to a fallback agent or were not sent"
        )
    if fact_check_failure:
        return f"the fact check did not finish: {fact_check_failure}"
    return None


class Report(BaseModel):
    """The rendered answer with its coverage table and unresolved gaps."""

    model_config = ConfigDict(frozen=True)

    markdown: str
    sections: tuple[str, ...] = ()
    citations: tuple[Citation, ...] = ()
    coverage_table: tuple[CoverageRow, ...] = ()
    unresolved_gaps: tuple[str, ...] = ()
    summary: RunSummary = RunSummary()
