"""gap_check: coverage by code, an independent enumeration, and what to re-send.

What is re-sent, to whom, and when delegation stops are the rules of
`roles.delegation`. When the run's token budget is spent with values still
uncovered, the coordinator escalates like a branch does: a person may grant
another budget's worth (retry, or a hint for the next tasks) or let it write
its report.
"""

from __future__ import annotations

import time

from langgraph.runtime import Runtime, get_runtime

from roles.delegation import budget_spent, next_round, remaining_seconds
from roles.enumerate import enumerators
from runtime.context import Context
from runtime.durable import can_pause, durable
from runtime.escalation import ask_person
from runtime.reliability import describe, settle
from runtime.telemetry import emit
from state.coverage import RoundCoverage
from state.events import Event
from state.findings import Finding
from state.graph import ResearchState
from state.handoff import Decision, HandoffSummary
from state.plan import CoveragePlan
from state.usage import Usage
from subagents.services import services


async def gap_check(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Compute coverage, enumerate what the plan missed, queue the gaps.

    The enumerations run after a direct answer too: values they find turn it
    into a delegated plan. What goes out next, and when delegation stops, is
    `roles.delegation.next_round`'s rule; a spent token budget asks a person.
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
    decided = next_round(
        plan,
        list(state.get("results", {}).values()),
        findings,
        coverage,
        run_id=state["run_id"],
        ctx=ctx,
        agents=dict((await services(ctx)).agents),
        breakers=state.get("breakers", {}),
        remaining_s=remaining_seconds(ctx, state.get("started_at", time.time())),
    )
    tasks, stopped = decided.tasks, decided.stopped
    granted = state.get("budget_granted", 0)
    spent = spent_tokens(state) + usage.tokens
    if stopped is None and budget_spent(ctx, spent, granted):
        budget = ctx.run_token_budget + granted
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
        "blocked": decided.blocked,
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
    at most `max_new_values` values a round. One that
    fails costs its enumeration only; the failure is reported as an event.
    Returns the plan, the new values, the lead's usage and those events.
    """
    run = await services(ctx)
    added: list[str] = []
    usage, failures = Usage(), []
    for enumerator in enumerators(
        run.lead,
        run.kb,
        limit=ctx.max_new_values,
        timeout_s=ctx.lead_timeout_s,
        max_facets=ctx.max_subagents,
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
