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
from runtime.kb import knowledge_base
from runtime.models import load_chat_model
from runtime.telemetry import emit
from state.graph import ResearchState
from state.question import check_question
from subagents.gates import user_gates
from subagents.registry import DefinitionError, registered


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
