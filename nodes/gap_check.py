"""gap_check: coverage by code, an independent enumeration, and what to re-send."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from langgraph.runtime import Runtime

from roles.enumerate import enumerators
from runtime.context import Context
from runtime.kb import knowledge_base
from runtime.models import load_chat_model
from runtime.reliability import describe, settle
from runtime.telemetry import emit
from state.coverage import RoundCoverage
from state.events import Event
from state.findings import Finding
from state.graph import ResearchState
from state.plan import CoveragePlan
from state.tasks import TaskDefinition, TaskResult
from state.usage import Usage

MAX_ATTEMPTS_PER_VALUE = 2
"""Tasks a value may be sent in before it is left uncovered."""


async def gap_check(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Compute coverage, enumerate what the plan missed, queue the gaps.

    The enumerations run after a direct answer too: values they find turn it
    into a delegated plan. Delegation stops (no pending tasks) when every value
    is covered, after `max_rounds` re-delegations, when a round added no
    verified finding, when the run's deadline has passed, or when every
    uncovered value was tried as often as allowed; the reason is recorded.
    """
    ctx = runtime.context
    plan, round_no = state["plan"], state.get("round", 0)
    findings = state.get("findings", [])
    plan, new_values, usage, events = await find_new_values(plan, findings, ctx)
    history = state.get("coverage", [])
    coverage = RoundCoverage.measure(
        plan.values,
        findings,
        need=ctx.min_findings_per_value,
        round_no=round_no,
        new_values=tuple(new_values),
        previous=history[-1] if history else None,
    )
    remaining = ctx.run_timeout_s - (time.time() - state.get("started_at", time.time()))
    tasks = next_tasks(
        plan,
        list(state.get("results", {}).values()),
        findings,
        coverage.uncovered,
        trace_id=state["trace_id"],
        round_no=round_no + 1,
        ctx=ctx,
        timeout_s=min(ctx.task_timeout_s, max(remaining, 0.0)),
    )
    stopped = stop_reason(coverage, tasks, round_no, ctx.max_rounds, remaining)
    if stopped:
        tasks = []
    coverage = coverage.model_copy(update={"stopped": stopped})
    event = emit(
        "COVERAGE",
        stage="gap_check",
        round=round_no,
        coverage=coverage.coverage,
        covered=len(coverage.covered),
        uncovered=len(coverage.uncovered),
        new_values=len(new_values),
        redelegate=len(tasks),
        added=", ".join(new_values) or None,
        stopped=stopped,
    )
    update: ResearchState = {
        "plan": plan,
        "coverage": [coverage],
        "pending": tasks,
        "events": [*events, event],
        "lead_usage": usage,
    }
    if tasks:
        update["round"] = round_no + 1
    return update


def stop_reason(
    coverage: RoundCoverage,
    tasks: list[TaskDefinition],
    round_no: int,
    max_rounds: int,
    remaining_s: float,
) -> str | None:
    """Why delegation ends after this round, or None if the gaps go out again."""
    if not coverage.uncovered:
        return "every value is covered"
    if round_no >= max_rounds:
        return f"the round limit ({max_rounds} re-delegations) was reached"
    if not coverage.improved:
        return "the last round added no verified finding"
    if remaining_s <= 0:
        return "the run's deadline passed"
    if not tasks:
        return f"every uncovered value was sent out {MAX_ATTEMPTS_PER_VALUE} times"
    return None


async def find_new_values(
    plan: CoveragePlan, findings: list[Finding], ctx: Context
) -> tuple[CoveragePlan, list[str], Usage, list[Event]]:
    """The plan extended by the independent enumerations, and what they added.

    Each enumerator sees the plan as the ones before it extended it, and adds
    at most `max_subagents` values a round. One that
    fails costs its enumeration only; the failure is reported as an event.
    Returns the plan, the new values, the lead's usage and those events.
    """
    kb = await asyncio.to_thread(knowledge_base, ctx.kb_path)
    model = await asyncio.to_thread(load_chat_model, ctx.model("lead"))
    added: list[str] = []
    usage, failures = Usage(), []
    for enumerator in enumerators(
        model, kb, limit=ctx.max_subagents, timeout_s=ctx.lead_timeout_s
    ):
        outcome = await settle(enumerator.missing(plan, findings))
        if isinstance(outcome, Exception):
            failures.append(
                emit("COVERAGE", stage="enumerate", error=describe(outcome))
            )
            continue
        for dimension, values in outcome.values.items():
            plan = plan.extended(dimension, values)
            added += values
        usage += outcome.usage
    return plan, added, usage, failures


def next_tasks(
    plan: CoveragePlan,
    results: list[TaskResult],
    findings: list[Finding],
    uncovered: tuple[str, ...],
    *,
    trace_id: str,
    round_no: int,
    ctx: Context,
    timeout_s: float,
) -> list[TaskDefinition]:
    """One task per facet for its uncovered values not yet tried too often.

    Each carries the sources already cited and what earlier attempts at its
    values found or why they failed.
    """
    attempts = Counter(v for r in results for v in r.values)
    by_facet: dict[str, list[str]] = {}
    owners = plan.owners()
    for value in uncovered:
        owner = owners.get(value)
        if owner is not None and attempts[value] < MAX_ATTEMPTS_PER_VALUE:
            by_facet.setdefault(owner.id, []).append(value)
    facets = {f.id: f for f in plan.facets}
    cited = tuple({f.source.passage_id: f.source for f in findings}.values())
    never_tried_first = sorted(
        by_facet.items(), key=lambda item: min(attempts[v] for v in item[1])
    )
    return [
        TaskDefinition.for_facet(
            facets[facet_id],
            question=plan.question,
            trace_id=trace_id,
            round_no=round_no,
            timeout_s=timeout_s,
            values=tuple(values),
            cited=cited,
            earlier=tuple(e for v in values if (e := earlier_attempt(v, results))),
        )
        for facet_id, values in never_tried_first
    ][: ctx.max_subagents]


def earlier_attempt(value: str, results: list[TaskResult]) -> str | None:
    """What the last task sent for `value` found, or why it failed; None if none."""
    tried = sorted((r for r in results if value in r.values), key=lambda r: r.round)
    if not tried:
        return None
    last = tried[-1]
    if last.status == "failed":
        return f"{value}: the last task failed ({'; '.join(last.errors[:1])})"
    found = sum(value in f.values for f in last.findings)
    why = f"; {last.errors[0]}" if last.errors else ""
    return (
        f"{value}: the last task brought {found} finding(s) for it; too few passed "
        f"verification{why}"
    )
