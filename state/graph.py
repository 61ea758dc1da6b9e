"""The coordinator's graph state, with a reducer on every key branches write."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from state.circuit import Breaker
from state.coverage import RoundCoverage
from state.events import Event
from state.findings import Finding
from state.handoff import HandoffSummary
from state.plan import CoveragePlan
from state.report import Report
from state.tasks import TaskDefinition, TaskResult
from state.usage import Usage


def merge_results(
    left: dict[str, TaskResult], right: dict[str, TaskResult]
) -> dict[str, TaskResult]:
    """Merge results keyed by task id, so a replayed task cannot duplicate."""
    return {**left, **right}


class InputState(TypedDict):
    """What a user types: the question."""

    question: str


class OutputState(TypedDict, total=False):
    """What a run gives back: the plan, coverage per round, the report.

    The report carries the Markdown, the coverage table, what stayed uncovered
    and the run summary (tasks, failures, retries, tokens per role and round).
    The whole state, with every result and event, is the thread's state.
    """

    question: str
    plan: CoveragePlan
    coverage: Annotated[list[RoundCoverage], operator.add]
    report: Report | None


class ResearchState(TypedDict, total=False):
    """The coordinator's state.

    Attributes:
        question: The question to answer.
        run_id: Id of the run; task ids derive from it.
        started_at: When the run started (seconds since the epoch), for its
            deadline.
        plan: The linted coverage plan; gap_check adds facets for new values.
        pending: Tasks to send in the coming fan-out.
        round: The current delegation round, 0 for the first fan-out.
        results: Every subagent result, keyed by task id (parallel writers).
        findings: Deduplicated findings of all rounds; after `verify`, only
            the verified ones.
        dropped: How many findings failed verification, by reason.
        coverage: One RoundCoverage per round, in order.
        events: Protocol events (DELEGATE, RESULT, RETRY, ESCALATE, COVERAGE, GATE),
            appended by the nodes that emit them.
        lead_usage: What the lead model's calls cost (plan, enumerate, write).
        fact_check_usage: What the verifier agent's calls cost.
        fact_checks: The verifier's verdict on each finding it judged, by key.
        fact_check_failure: Why the last round's verifier stopped before it
            judged every finding; None when it did, or when there is none.
        breakers: Each agent's circuit breaker, after the results so far.
        blocked: Uncovered values no agent could take, with the reason.
        budget_granted: Tokens a person added to the run's budget.
        plan_review: Whether a person reviews the plan before it is sent (the
            context's `approve_plan` when the run was planned).
        report: The final report; None until write runs.
    """

    question: str
    run_id: str
    started_at: float
    plan: CoveragePlan
    pending: list[TaskDefinition]
    round: int
    results: Annotated[dict[str, TaskResult], merge_results]
    findings: list[Finding]
    dropped: dict[str, int]
    coverage: Annotated[list[RoundCoverage], operator.add]
    events: Annotated[list[Event], operator.add]
    lead_usage: Annotated[Usage, operator.add]
    fact_check_usage: Annotated[Usage, operator.add]
    fact_checks: dict[str, bool]
    fact_check_failure: str | None
    breakers: dict[str, Breaker]
    blocked: dict[str, str]
    budget_granted: int
    plan_review: bool
    report: Report | None


class SubagentInput(TypedDict, total=False):
    """What one subagent run starts from.

    The coordinator's fan-out sends a task and nothing else; a run by hand (the
    `subagent` graph in Studio) gives a question and the values to cover.

    Attributes:
        task: The task to run.
        question: For a run by hand: the question the values belong to.
        values: For a run by hand: the values to cover.
        agent: For a run by hand: the agent to run; routing picks when empty.
    """

    task: TaskDefinition
    question: str
    values: list[str]
    agent: str


class SubagentOutput(TypedDict):
    """All that leaves a subagent run: its result, keyed by task id, and events."""

    results: Annotated[dict[str, TaskResult], merge_results]
    events: Annotated[list[Event], operator.add]


class EscalationInput(TypedDict):
    """What a task's escalation starts from: the task, its result, the handoff."""

    task: TaskDefinition
    result: TaskResult
    handoff: HandoffSummary


class SubagentState(TypedDict, total=False):
    """A subagent run's state: what it starts from and what leaves it."""

    task: TaskDefinition
    question: str
    values: list[str]
    agent: str
    results: Annotated[dict[str, TaskResult], merge_results]
    events: Annotated[list[Event], operator.add]
