"""gap_check: coverage by code, an independent enumeration, and what to re-send.

Gaps go to each facet's agent, or to its fallback while the agent's circuit is
open. When the run's token budget is spent with values still uncovered, the
coordinator escalates like a branch does: a person may grant another budget's
worth (retry, or a hint for the next tasks) or let it write its report.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from langgraph.runtime import Runtime, get_runtime

from roles.enumerate import enumerators
from runtime.context import Context
from runtime.durable import can_pause, durable
from runtime.escalation import ask_person
from runtime.kb import knowledge_base
from runtime.models import load_chat_model
from runtime.reliability import describe, settle
from runtime.telemetry import emit
from state.coverage import RoundCoverage
from state.events import Event
from state.findings import Finding
from state.graph import ResearchState
from state.handoff import Decision, HandoffSummary
from state.plan import CoveragePlan
from state.tasks import TaskDefinition, TaskResult
from state.usage import Usage
from subagents.registry import registered
from subagents.routing import Router

MAX_ATTEMPTS_PER_VALUE = 2
"""Tasks a value may be sent in before it is left uncovered."""


async def gap_check(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Compute coverage, enumerate what the plan missed, queue the gaps.

    The enumerations run after a direct answer too: values they find turn it
    into a delegated plan. Delegation stops (no pending tasks) when every value
    is covered, when a person aborted the run, after `max_rounds`
    re-delegations, when a round added no verified finding, when the run's
    deadline has passed or its token budget is spent, or when no uncovered
    value can be sent (tried as often as allowed, or no agent in service); the
    reason is recorded.
    """
    ctx = runtime.context
    plan, round_no = state["plan"], state.get("round", 0)
    findings = state.get("findings", [])
    plan, new_values, usage, events = await enumerated(plan, findings)
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
    results = list(state.get("results", {}).values())
    agents = await registered(ctx.agents_dir)
    tasks, blocked = next_tasks(
        plan,
        results,
        findings,
        coverage.uncovered,
        trace_id=state["trace_id"],
        round_no=round_no + 1,
        ctx=ctx,
        router=Router(agents, state.get("breakers", {}), ctx.routing),
        remaining_s=remaining,
    )
    aborted = any(r.escalation == "abort" for r in results)
    stopped = (
        "a person aborted the run"
        if aborted
        else stop_reason(coverage, tasks, round_no, ctx.max_rounds, remaining, blocked)
    )
    granted = state.get("budget_granted", 0)
    spent = spent_tokens(state) + usage.tokens
    budget = ctx.run_token_budget + granted
    if stopped is None and ctx.run_token_budget and spent >= budget:
        decision = decide_on_budget(state, coverage, spent, budget, ctx, runtime)
        events.append(
            emit(
                "ESCALATE",
                stage="budget",
                reason=f"run budget spent: {spent} of {budget} tokens",
                decision=decision.action,
            )
        )
        if decision.action in ("retry", "hint"):
            granted += ctx.run_token_budget
            tasks = [t.with_hint(decision.hint) for t in tasks]
        else:
            stopped = f"the run's token budget was spent ({spent} of {budget} tokens)"
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
        tokens=spent,
    )
    update: ResearchState = {
        "plan": plan,
        "coverage": [coverage],
        "pending": tasks,
        "events": [*events, event],
        "lead_usage": usage,
        "blocked": blocked,
        "budget_granted": granted,
    }
    if tasks:
        update["round"] = round_no + 1
    return update


def spent_tokens(state: ResearchState) -> int:
    """Tokens the run has spent so far: the lead's and every task's."""
    results = state.get("results", {}).values()
    return state.get("lead_usage", Usage()).tokens + sum(r.tokens for r in results)


def decide_on_budget(
    state: ResearchState,
    coverage: RoundCoverage,
    spent: int,
    budget: int,
    ctx: Context,
    runtime: Runtime[Context],
) -> Decision:
    """Ask a person whether to go on past the spent budget; skip if none can."""
    if ctx.on_escalation != "interrupt" or not can_pause(runtime):
        return Decision(action="skip")
    handoff = HandoffSummary(
        reason=f"the run's token budget is spent ({spent} of {budget} tokens) "
        f"with {len(coverage.uncovered)} value(s) uncovered",
        urgency="run",
        question=state["question"],
        facet="values still uncovered",
        values=coverage.uncovered,
        attempted=tuple(
            f"round {c.round}: {len(c.covered)} value(s) covered"
            for c in state.get("coverage", [])
        ),
        errors=tuple(
            e for r in state.get("results", {}).values() for e in r.errors[:1]
        )[-5:],
        recommended_action="skip",
        options=("retry", "skip", "hint"),
    )
    decision = ask_person(handoff)
    return decision if decision.action != "abort" else Decision(action="skip")


def stop_reason(
    coverage: RoundCoverage,
    tasks: list[TaskDefinition],
    round_no: int,
    max_rounds: int,
    remaining_s: float,
    blocked: dict[str, str],
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
    if not tasks and blocked:
        why = "; ".join(sorted(set(blocked.values())))
        return f"no uncovered value could be sent ({why})"
    if not tasks:
        return f"every uncovered value was sent out {MAX_ATTEMPTS_PER_VALUE} times"
    return None


async def enumerate_in_context(
    plan: CoveragePlan, findings: list[Finding]
) -> tuple[CoveragePlan, list[str], Usage, list[Event]]:
    """`find_new_values` with the run's context."""
    return await find_new_values(plan, findings, get_runtime(Context).context)


enumerated = durable(enumerate_in_context, name="enumerate")
"""The enumerations as a LangGraph task: a resumed gap_check replays them."""


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
    router: Router,
    remaining_s: float,
) -> tuple[list[TaskDefinition], dict[str, str]]:
    """One task per facet for its uncovered values not yet tried too often.

    Values of a task escalated and skipped (or aborted) are not sent again.

    Each goes to its facet's agent or that agent's fallback, and carries the
    sources already cited and what earlier attempts at its values found or why
    they failed. Returns the tasks, and the values no agent in service could
    take, with the reason.
    """
    attempts = Counter(v for r in results for v in r.values)
    let_go = {v for r in results if r.escalation in ("skip", "abort") for v in r.values}
    by_facet: dict[str, list[str]] = {}
    blocked: dict[str, str] = {}
    owners = plan.owners()
    for value in uncovered:
        owner = owners.get(value)
        if owner is None:
            continue
        if value in let_go:
            blocked[value] = "escalated, and let go"
            continue
        if attempts[value] < MAX_ATTEMPTS_PER_VALUE:
            by_facet.setdefault(owner.id, []).append(value)
    facets = {f.id: f for f in plan.facets}
    cited = tuple({f.source.passage_id: f.source for f in findings}.values())
    never_tried_first = sorted(
        by_facet.items(), key=lambda item: min(attempts[v] for v in item[1])
    )
    failures = Counter(r.facet_id for r in results if r.status == "failed")
    tasks = []
    for facet_id, values in never_tried_first:
        facet = facets[facet_id]
        agent_id, why = router.assign(facet)
        if agent_id is None:
            blocked.update(dict.fromkeys(values, why))
            continue
        tasks.append(
            TaskDefinition.for_facet(
                facet,
                question=plan.question,
                trace_id=trace_id,
                round_no=round_no,
                values=tuple(values),
                cited=cited,
                earlier=tuple(e for v in values if (e := earlier_attempt(v, results))),
                agent_id=agent_id,
                route=why,
                failures=failures[facet_id],
                **ctx.task_limits(remaining_s),
            )
        )
    return tasks[: ctx.max_subagents], blocked


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
