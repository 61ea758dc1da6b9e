"""dispatch: plan the coverage of a question and queue one task per facet."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from roles.direct_answer import answer_directly
from roles.plan import planner
from runtime.context import Context
from runtime.kb import knowledge_base
from runtime.models import load_chat_model
from runtime.telemetry import emit
from state.agents import AgentManifest
from state.graph import ResearchState
from state.plan import LEAD_AGENT, CoveragePlan
from state.question import check_question
from state.tasks import TaskDefinition
from state.usage import Usage
from subagents.gates import user_gates
from subagents.registry import DefinitionError, registered
from subagents.routing import Router


def run_trace_id() -> str:
    """The id of this run: the server's run id, else a fresh one.

    Task ids derive from it, so a replayed run keeps its ids (dispatch's output
    is checkpointed) while two questions asked on one thread never share any.
    """
    config = get_config()
    run_id = config.get("run_id") or config.get("configurable", {}).get("run_id")
    return str(run_id or uuid.uuid4())


async def dispatch(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Plan the coverage, lint it, and queue one task per facet.

    A new question on a thread starts afresh: results, findings, coverage
    history, events and report of an earlier run are overwritten.
    """
    ctx = runtime.context
    question = check_question(state.get("question"))
    kb = await asyncio.to_thread(knowledge_base, ctx.kb_path)
    agents = await registered(ctx.agents_dir)
    model = await asyncio.to_thread(load_chat_model, ctx.model("lead"))
    user_gates(ctx.gates)  # a gate that cannot be loaded fails the run here
    if ctx.verifier and ctx.verifier not in agents:
        raise DefinitionError(f"the verifier {ctx.verifier!r} names no definition")
    planned = await planner(
        model, kb, max_facets=ctx.max_subagents, timeout_s=ctx.lead_timeout_s
    ).plan(question)
    plan, trace_id = planned.plan, run_trace_id()
    check_agents(plan, agents)
    event = emit(
        "COVERAGE",
        stage="plan",
        dimensions=len(plan.dimensions),
        values=len(plan.values),
        facets=len(plan.facets),
        direct=plan.direct_answer,
        fallback=plan.fallback or None,
    )
    fresh = {
        **first_round(question, plan, ctx, trace_id, agents),
        "events": Overwrite([event]),
        "lead_usage": Overwrite(planned.usage),
    }
    if plan.direct_answer:
        result = await asyncio.to_thread(
            answer_directly, kb, plan, trace_id, ctx.task_timeout_s
        )
        return {**fresh, "results": Overwrite({result.task_id: result})}
    return fresh


def first_round(
    question: str,
    plan: CoveragePlan,
    ctx: Context,
    trace_id: str,
    agents: dict[str, AgentManifest],
) -> dict[str, Any]:
    """A run's state before its first fan-out, the plan's tasks queued.

    Whatever an earlier run left on the thread (results, findings, coverage,
    events, usage, report) is overwritten.
    """
    return {
        "question": question,
        "plan": plan,
        "trace_id": trace_id,
        "started_at": time.time(),
        "round": 0,
        "pending": first_tasks(plan, ctx, trace_id, agents),
        "results": Overwrite({}),
        "findings": [],
        "dropped": {},
        "coverage": Overwrite([]),
        "events": Overwrite([]),
        "lead_usage": Overwrite(Usage()),
        "verifier_usage": Overwrite(Usage()),
        "fact_checks": {},
        "breakers": {},
        "blocked": {},
        "budget_granted": 0,
        "plan_review": ctx.approve_plan,
        "report": None,
    }


def first_tasks(
    plan: CoveragePlan,
    ctx: Context,
    trace_id: str,
    agents: dict[str, AgentManifest],
) -> list[TaskDefinition]:
    """One task per facet for the first round, each routed to an agent."""
    router = Router(agents, {}, ctx.routing)
    tasks = []
    for facet in plan.facets[: ctx.max_subagents]:
        agent, why = router.assign(facet)
        if agent is None:
            raise DefinitionError(f"no subagent can take facet {facet.id}: {why}")
        tasks.append(
            TaskDefinition.for_facet(
                facet,
                question=plan.question,
                trace_id=trace_id,
                round_no=0,
                agent_id=agent,
                route=why,
                **ctx.task_limits(),
            )
        )
    return tasks


def check_agents(plan: CoveragePlan, agents: dict[str, AgentManifest]) -> None:
    """Refuse a plan that names an agent no definition provides."""
    missing = {f.agent_id for f in plan.facets} - set(agents) - {LEAD_AGENT}
    if missing:
        raise DefinitionError(
            f"no subagent definition for {', '.join(sorted(missing))}; "
            f"defined: {', '.join(sorted(agents))}"
        )
