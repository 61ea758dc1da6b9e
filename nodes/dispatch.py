"""dispatch: enumerate the dimensions a question spans, then facets that own them."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Overwrite
from pydantic import BaseModel, Field, model_validator

from nodes.resources import knowledge_base
from runtime.context import Context
from runtime.corpus_plan import plan_from_corpus
from runtime.direct_answer import answer_directly
from runtime.models import lead_deadline, load_chat_model
from runtime.structured import ainvoke_structured, schema_instructions
from runtime.telemetry import emit
from state.agents import AgentManifest
from state.graph import ResearchState
from state.plan import (
    DEFAULT_AGENT,
    LEAD_AGENT,
    CoveragePlan,
    Dimension,
    Facet,
    PlanLintError,
    facet_for_value,
    lint_plan,
)
from state.question import check_question
from state.tasks import TaskDefinition
from subagents.registry import DefinitionError, load_registry

PLAN_PROMPT = """You plan research that answers a broad question completely.

First enumerate the dimensions the question spans. A dimension is one axis of
the answer (for "the impact of AI on creative industries": medium = visual art,
music, writing, film and TV, performing arts, games, design). List every value a
complete answer must cover, not only the obvious ones.

Then write at most {max_facets} facets. Each facet is one subagent's task: a
title, a brief that says exactly what to find, and `covers`, the dimension
values it owns. Every value must be owned by exactly one facet; no two facets
may own the same value. Assign each facet an agent from: {agents}.

If one or two searches would answer the question (it asks for a single fact),
set direct_answer to true and leave dimensions and facets empty.

{format}"""


class PlanDraft(BaseModel):
    """The lead's plan, before the lint: the contract's own dimensions and facets."""

    direct_answer: bool = False
    dimensions: list[Dimension] = Field(default_factory=list)
    facets: list[Facet] = Field(default_factory=list)

    @model_validator(mode="after")
    def _delegates_or_answers(self) -> PlanDraft:
        if not self.direct_answer and not (self.dimensions and self.facets):
            raise ValueError("a plan needs dimensions and facets unless direct_answer")
        return self


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
    registry = await asyncio.to_thread(load_registry)
    trace_id = run_trace_id()
    model = await asyncio.to_thread(load_chat_model, ctx.lead_model)
    tokens = 0
    if model is None:
        plan = await asyncio.to_thread(
            plan_from_corpus, kb, question, ctx.max_subagents
        )
    else:
        async with lead_deadline(ctx.lead_timeout_s, "planning"):
            plan, tokens = await plan_with_model(
                model, question, ctx.max_subagents, registry
            )
    check_agents(plan, registry)
    event = emit(
        "COVERAGE",
        stage="plan",
        dimensions=len(plan.dimensions),
        values=len(plan.values),
        facets=len(plan.facets),
        direct=plan.direct_answer,
    )
    fresh_run: dict[str, Any] = {
        "question": question,
        "plan": plan,
        "trace_id": trace_id,
        "round": 0,
        "pending": [],
        "results": Overwrite({}),
        "findings": [],
        "dropped": 0,
        "gaps": Overwrite([]),
        "events": Overwrite([event]),
        "lead_tokens": Overwrite(tokens),
        "report": None,
    }
    if plan.direct_answer:
        result = await asyncio.to_thread(answer_directly, kb, question, trace_id)
        return {**fresh_run, "results": Overwrite({result.task_id: result})}
    tasks = [
        TaskDefinition.for_facet(
            facet,
            question=question,
            trace_id=trace_id,
            round_no=0,
            timeout_s=ctx.task_timeout_s,
        )
        for facet in plan.facets[: ctx.max_subagents]
    ]
    return {**fresh_run, "pending": tasks}


def check_agents(plan: CoveragePlan, registry: dict[str, AgentManifest]) -> None:
    """Refuse a plan that names an agent no definition provides."""
    missing = {f.agent_id for f in plan.facets} - set(registry) - {LEAD_AGENT}
    if missing:
        raise DefinitionError(
            f"no subagent definition for {', '.join(sorted(missing))}; "
            f"defined: {', '.join(sorted(registry))}"
        )


async def plan_with_model(
    model: BaseChatModel,
    question: str,
    max_facets: int,
    registry: dict[str, AgentManifest],
) -> tuple[CoveragePlan, int]:
    """Ask the lead for a plan; on a lint error, ask once more, then repair by code.

    Returns the plan and the tokens the lead used.
    """
    prompt = PLAN_PROMPT.format(
        max_facets=max_facets,
        agents="; ".join(f"{a.agent_id} ({a.description})" for a in registry.values()),
        format=schema_instructions(PlanDraft),
    )
    messages = [SystemMessage(prompt), HumanMessage(question)]
    draft, tokens = await ainvoke_structured(model, messages, PlanDraft)
    try:
        return lint_plan(to_plan(question, draft, registry)), tokens
    except PlanLintError as err:
        messages += [HumanMessage(f"The plan was rejected: {err}. Fix it.")]
        draft, used = await ainvoke_structured(model, messages, PlanDraft)
        tokens += used
    plan = to_plan(question, draft, registry)
    try:
        return lint_plan(plan), tokens
    except PlanLintError as err:
        return lint_plan(repair(plan, err)), tokens


def to_plan(
    question: str, draft: PlanDraft, registry: dict[str, AgentManifest]
) -> CoveragePlan:
    """A CoveragePlan from a draft.

    Facets are numbered here (f0, f1, ...), whatever ids the model chose, and
    an agent no definition provides falls back to the default one.
    """
    if draft.direct_answer:
        return CoveragePlan.direct(question)
    return CoveragePlan(
        question=question,
        dimensions=tuple(
            d.model_copy(update={"values": tuple(dict.fromkeys(d.values))})
            for d in draft.dimensions
        ),
        facets=tuple(
            f.model_copy(
                update={
                    "id": f"f{n}",
                    "covers": tuple(dict.fromkeys(f.covers)),
                    "agent_id": f.agent_id if f.agent_id in registry else DEFAULT_AGENT,
                }
            )
            for n, f in enumerate(draft.facets)
        ),
    )


def repair(plan: CoveragePlan, err: PlanLintError) -> CoveragePlan:
    """Drop values no dimension names; give each unowned value a facet of its own."""
    facets = []
    for facet in plan.facets:
        covers = tuple(v for v in facet.covers if v not in err.unknown)
        if covers:
            facets.append(facet.model_copy(update={"covers": covers}))
    taken = {f.id for f in facets}
    facets += [facet_for_value(plan.question, v, taken) for v in err.unowned]
    return plan.model_copy(update={"facets": tuple(facets)})
