"""The delegation rules: what goes out in a round, to which agent, and when to stop.

The first round sends one task per facet of the plan; each later round sends
a facet's uncovered values never sent in one task, and each uncovered value
sent before in a task of its own, never a value more than
`MAX_ATTEMPTS_PER_VALUE` times, nor one a person let go; the two take turns.
Every task is routed the same way (`routed_task`). Delegation stops when
every value is covered, a person aborted, the round limit is reached, a round
added no verified finding and every value left was sent before, the run's
deadline passed, or nothing uncovered can be sent. Nodes,
the CLI and the benchmarks call these rules; none of them holds a rule of its
own.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from langgraph.types import Overwrite

from roles.grounding import round_robin
from runtime.context import Context
from state.agents import AgentManifest
from state.circuit import Breaker
from state.coverage import RoundCoverage
from state.findings import Finding
from state.plan import LEAD_AGENT, CoveragePlan, Facet
from state.tasks import TaskDefinition, TaskResult
from state.usage import Usage
from subagents.registry import DefinitionError
from subagents.routing import Router

MAX_ATTEMPTS_PER_VALUE = 2
"""Tasks a value may be sent in before it is left uncovered."""


def check_agents(plan: CoveragePlan, agents: dict[str, AgentManifest]) -> None:
    """Refuse a plan that names an agent no definition provides."""
    missing = {f.agent_id for f in plan.facets} - set(agents) - {LEAD_AGENT}
    if missing:
        raise DefinitionError(
            f"no subagent definition for {', '.join(sorted(missing))}; "
            f"defined: {', '.join(sorted(agents))}"
        )


def routed_task(
    facet: Facet,
    router: Router,
    *,
    question: str,
    run_id: str,
    round_no: int,
    limits: dict[str, Any],
    **given: Any,
) -> tuple[TaskDefinition | None, str]:
    """The task sending `facet` out in round `round_no`, and why its agent.

    `limits` are the task's timeouts, attempts and budget; `given` what else
    it carries (the values, sources cited, earlier attempts). No task (None)
    when no agent in service can take it.
    """
    agent, why = router.assign(facet)
    if agent is None:
        return None, why
    task = TaskDefinition.for_facet(
        facet,
        question=question,
        run_id=run_id,
        round_no=round_no,
        agent_id=agent,
        route=why,
        **limits,
        **given,
    )
    return task, why


def first_tasks(
    plan: CoveragePlan, ctx: Context, run_id: str, agents: dict[str, AgentManifest]
) -> list[TaskDefinition]:
    """One task per facet for the first round, each routed to an agent."""
    router = Router(agents, {}, ctx.routing)
    tasks = []
    for facet in plan.facets[: ctx.max_subagents]:
        task, why = routed_task(
            facet,
            router,
            question=plan.question,
            run_id=run_id,
            round_no=0,
            limits=ctx.task_limits(),
        )
        if task is None:
            raise DefinitionError(f"no subagent can take facet {facet.id}: {why}")
        tasks.append(task)
    return tasks


def first_round(
    question: str,
    plan: CoveragePlan,
    ctx: Context,
    run_id: str,
    agents: dict[str, AgentManifest],
) -> dict[str, Any]:
    """A run's state before its first fan-out, the plan's tasks queued.

    Whatever an earlier run left on the thread (results, findings, coverage,
    events, usage, report) is overwritten.
    """
    return {
        "question": question,
        "plan": plan,
        "run_id": run_id,
        "started_at": time.time(),
        "round": 0,
        "pending": first_tasks(plan, ctx, run_id, agents),
        "results": Overwrite({}),
        "findings": [],
        "dropped": {},
        "coverage": Overwrite([]),
        "events": Overwrite([]),
        "lead_usage": Overwrite(Usage()),
        "fact_check_usage": Overwrite(Usage()),
        "fact_checks": {},
        "fact_check_failure": None,
        "breakers": {},
        "blocked": {},
        "budget_granted": 0,
        "plan_review": ctx.approve_plan,
        "report": None,
    }


@dataclass(frozen=True)
class NextRound:
    """What the gap check decided: the tasks to send, or why delegation stops.

    Attributes:
        tasks: The tasks of the next round; empty when it stops.
        blocked: Uncovered values no agent could take, with the reason.
        stopped: Why delegation ends after this round; None if it goes on.
    """

    tasks: list[TaskDefinition]
    blocked: dict[str, str]
    stopped: str | None


def next_round(
    plan: CoveragePlan,
    results: list[TaskResult],
    findings: list[Finding],
    coverage: RoundCoverage,
    *,
    run_id: str,
    ctx: Context,
    agents: dict[str, AgentManifest],
    breakers: dict[str, Breaker],
    remaining_s: float,
) -> NextRound:
    """The gaps of round `coverage.round` sent out again, or why not."""
    router = Router(agents, breakers, ctx.routing)
    tasks, blocked = next_tasks(
        plan,
        results,
        findings,
        coverage.uncovered,
        run_id=run_id,
        round_no=coverage.round + 1,
        ctx=ctx,
        router=router,
        remaining_s=remaining_s,
    )
    if any(r.escalation == "abort" for r in results):
        stopped: str | None = "a person aborted the run"
    else:
        sent = {v for r in results for v in r.values}
        stopped = stop_reason(
            coverage,
            tasks,
            coverage.round,
            ctx.max_rounds,
            remaining_s,
            blocked,
            never_sent=any(v not in sent for t in tasks for v in t.values),
        )
    return NextRound([] if stopped else tasks, blocked, stopped)


def next_tasks(
    plan: CoveragePlan,
    results: list[TaskResult],
    findings: list[Finding],
    uncovered: tuple[str, ...],
    *,
    run_id: str,
    round_no: int,
    ctx: Context,
    router: Router,
    remaining_s: float,
) -> tuple[list[TaskDefinition], dict[str, str]]:
    """Tasks for the uncovered values not yet tried too often (`new_and_retried`).

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
    failures = Counter(r.facet_id for r in results if r.status == "failed")
    tasks = []
    for facet_id, values in new_and_retried(by_facet, attempts):
        task, why = routed_task(
            facets[facet_id],
            router,
            question=plan.question,
            run_id=run_id,
            round_no=round_no,
            limits=ctx.task_limits(remaining_s),
            values=tuple(values),
            cited=cited,
            earlier=tuple(e for v in values if (e := earlier_attempt(v, results))),
            failures=failures[facet_id],
        )
        if task is None:
            blocked.update(dict.fromkeys(values, why))
        else:
            tasks.append(task)
    return tasks[: ctx.max_subagents], blocked


def new_and_retried(
    by_facet: dict[str, list[str]], attempts: Counter[str]
) -> list[tuple[str, list[str]]]:
    """The values to send, as tasks: never sent ones and ones sent before, in turn.

    A facet's values never sent go together; a value sent before goes alone,
    for a task that brought nothing for several values may have read for one
    of them only. A round takes at most `max_subagents` tasks: values added by
    the gap check would otherwise fill every round and leave a planned value
    that failed once without its second attempt until the round limit.
    """
    fresh: list[tuple[str, list[str]]] = []
    again: list[tuple[str, list[str]]] = []
    for facet_id, values in by_facet.items():
        if never_sent := [v for v in values if not attempts[v]]:
            fresh.append((facet_id, never_sent))
        again += [(facet_id, [v]) for v in values if attempts[v]]
    return round_robin([fresh, again])


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


def stop_reason(
    coverage: RoundCoverage,
    tasks: list[TaskDefinition],
    round_no: int,
    max_rounds: int,
    remaining_s: float,
    blocked: dict[str, str],
    *,
    never_sent: bool = False,
) -> str | None:
    """Why delegation ends after this round, or None if the gaps go out again.

    A round that added no verified finding ends it unless `never_sent`: the
    next round's `tasks` carry a value no task was sent for yet.
    """
    if not coverage.uncovered:
        return "every value is covered"
    if round_no >= max_rounds:
        return f"the round limit ({max_rounds} re-delegations) was reached"
    if not coverage.improved and not never_sent:
        return "the last round added no verified finding"
    if remaining_s <= 0:
        return "the run's deadline passed"
    if not tasks and blocked:
        why = "; ".join(sorted(set(blocked.values())))
        return f"no uncovered value could be sent ({why})"
    if not tasks:
        return f"every uncovered value was sent out {MAX_ATTEMPTS_PER_VALUE} times"
    return None


def remaining_seconds(ctx: Context, started_at: float) -> float:
    """Seconds left before the run's deadline (negative once it has passed)."""
    return ctx.run_timeout_s - (time.time() - started_at)


def budget_spent(ctx: Context, spent: int, granted: int) -> bool:
    """Whether the run has spent its token budget and what a person granted."""
    return bool(ctx.run_token_budget) and spent >= ctx.run_token_budget + granted
