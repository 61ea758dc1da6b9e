"""dispatch: plan the coverage of a question and queue one task per facet."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from roles.delegation import check_agents, first_round
from roles.direct_answer import answer_directly
from roles.plan import planner
from runtime.context import Context
from runtime.durable import current_run_id
from runtime.telemetry import emit
from state.graph import ResearchState
from state.question import check_question
from subagents.services import services


async def dispatch(state: ResearchState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Plan the coverage, lint it, and queue one task per facet.

    A new question on a thread starts afresh: results, findings, coverage
    history, events and report of an earlier run are overwritten.
    """
    ctx = runtime.context
    question = check_question(state.get("question"))
    run = await services(ctx)
    await run.prepare_tools()  # a server that cannot start fails the run here
    kb, agents = run.kb, dict(run.agents)
    planned = await planner(
        run.lead, kb, max_facets=ctx.max_subagents, timeout_s=ctx.lead_timeout_s
    ).plan(question)
    plan, run_id = planned.plan, current_run_id()
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
        **first_round(question, plan, ctx, run_id, agents),
        "events": Overwrite([event]),
        "lead_usage": Overwrite(planned.usage),
    }
    if plan.direct_answer:
        result = await asyncio.to_thread(
            answer_directly, kb, plan, run_id, ctx.task_timeout_s
        )
        return {**fresh, "results": Overwrite({result.task_id: result})}
    return fresh
