"""dispatch: enumerate the dimensions a question spans, then facets that own them."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Overwrite
from pydantic import BaseModel, Field, model_validator

from nodes.resources import agents, knowledge_base
from runtime.context import Context
from runtime.extractive import best_sentences, idf_weights
from runtime.kb import KnowledgeBase, Passage, terms
from runtime.models import load_chat_model
from runtime.structured import ainvoke_structured, schema_instructions
from runtime.telemetry import emit
from state.agents import AgentManifest
from state.findings import Finding
from state.graph import ResearchState
from state.plan import (
    CoveragePlan,
    Dimension,
    Facet,
    PlanLintError,
    facet_for_value,
    lint_plan,
)
from state.tasks import TaskDefinition, TaskResult, task_id_for

MAX_QUESTION_CHARS = 4000
RELEVANT_SHARE = 0.5
"""A document (or section) is relevant when it scores this share of the best."""
DIRECT_ANSWER_SENTENCES = 3
LEAD_AGENT = "lead"

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


class DraftDimension(BaseModel):
    """A dimension as the lead drafts it."""

    name: str
    values: list[str] = Field(min_length=1)


class DraftFacet(BaseModel):
    """A facet as the lead drafts it."""

    id: str
    title: str
    brief: str
    covers: list[str] = Field(min_length=1)
    agent_id: str = "researcher"
    acceptance: str = "At least one verified, quoted finding per covered value."


class PlanDraft(BaseModel):
    """The lead's plan, before the lint."""

    direct_answer: bool = False
    dimensions: list[DraftDimension] = Field(default_factory=list)
    facets: list[DraftFacet] = Field(default_factory=list)

    @model_validator(mode="after")
    def _delegates_or_answers(self) -> PlanDraft:
        if not self.direct_answer and not (self.dimensions and self.facets):
            raise ValueError("a plan needs dimensions and facets unless direct_answer")
        return self


class QuestionError(ValueError):
    """A question that cannot be researched as given."""


def check_question(question: object) -> str:
    """The question, stripped; empty, non-text or oversized questions are refused."""
    if not isinstance(question, str) or not question.strip():
        raise QuestionError("the question is empty")
    question = " ".join(question.split())
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question has {len(question)} characters; the limit is "
            f"{MAX_QUESTION_CHARS}. Ask something shorter, or split it."
        )
    if not terms(question):
        raise QuestionError("the question has no searchable words")
    return question


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

    A new question on a thread starts afresh: results, coverage history and
    events of an earlier run are overwritten, not added to.
    """
    ctx = runtime.context
    question = check_question(state.get("question"))
    kb = await asyncio.to_thread(knowledge_base, ctx.kb_path)
    trace_id = run_trace_id()
    model = await asyncio.to_thread(load_chat_model, ctx.lead_model)
    if model is None:
        plan = await asyncio.to_thread(
            plan_from_corpus, kb, question, ctx.max_subagents
        )
    else:
        registry = await asyncio.to_thread(agents)
        plan = await plan_with_model(model, question, ctx.max_subagents, registry)
    event = emit(
        "COVERAGE",
        stage="plan",
        dimensions=len(plan.dimensions),
        values=len(plan.values),
        facets=len(plan.facets),
        direct=plan.direct_answer,
    )
    fresh_run = {
        "question": question,
        "plan": plan,
        "trace_id": trace_id,
        "round": 0,
        "results": Overwrite({}),
        "gaps": Overwrite([]),
        "events": Overwrite([event]),
    }
    if plan.direct_answer:
        result = await asyncio.to_thread(answer_directly, kb, question, plan, trace_id)
        return {
            **fresh_run,
            "pending": [],
            "results": Overwrite({result.task_id: result}),
        }
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


async def plan_with_model(
    model: BaseChatModel,
    question: str,
    max_facets: int,
    registry: dict[str, AgentManifest],
) -> CoveragePlan:
    """Ask the lead for a plan; on a lint error, ask once more, then repair by code."""
    prompt = PLAN_PROMPT.format(
        max_facets=max_facets,
        agents="; ".join(f"{a.agent_id} ({a.description})" for a in registry.values()),
        format=schema_instructions(PlanDraft),
    )
    messages = [SystemMessage(prompt), HumanMessage(question)]
    draft, _ = await ainvoke_structured(model, messages, PlanDraft)
    try:
        return lint_plan(to_plan(question, draft, registry))
    except PlanLintError as err:
        messages += [HumanMessage(f"The plan was rejected: {err}. Fix it.")]
        draft, _ = await ainvoke_structured(model, messages, PlanDraft)
    plan = to_plan(question, draft, registry)
    try:
        return lint_plan(plan)
    except PlanLintError as err:
        return lint_plan(repair(plan, err))


def to_plan(
    question: str, draft: PlanDraft, registry: dict[str, AgentManifest]
) -> CoveragePlan:
    """A CoveragePlan from a draft; unknown agents fall back to the researcher."""
    if draft.direct_answer:
        return direct_plan(question)
    return CoveragePlan(
        question=question,
        dimensions=tuple(
            Dimension(name=d.name, values=tuple(dict.fromkeys(d.values)))
            for d in draft.dimensions
        ),
        facets=tuple(
            Facet(
                id=f.id,
                title=f.title,
                brief=f.brief,
                covers=tuple(dict.fromkeys(f.covers)),
                agent_id=f.agent_id if f.agent_id in registry else "researcher",
                acceptance=f.acceptance,
            )
            for f in draft.facets
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


def plan_from_corpus(kb: KnowledgeBase, question: str, max_facets: int) -> CoveragePlan:
    """Extractive plan: the documents the question reaches are its values.

    When one document stands out, its relevant sections are the values; when
    only one section does, the question is answered directly.
    """
    docs = kb.rank_documents(question, max_facets * 4)
    if not docs:
        return direct_plan(question)
    relevant = [d for d in docs if d.score >= RELEVANT_SHARE * docs[0].score]
    if len(relevant) > 1:
        values = tuple(d.title for d in relevant[:max_facets])
        return _one_dimension_plan(question, "subject", values)
    sections = relevant_sections(kb, question, relevant[0])
    if len(sections) <= 1:
        return direct_plan(question)
    values = tuple(f"{relevant[0].title}: {s}" for s in sections[:max_facets])
    return _one_dimension_plan(question, f"aspect of {relevant[0].title}", values)


def relevant_sections(kb: KnowledgeBase, question: str, doc: Passage) -> list[str]:
    """Top-level sections of `doc` that the question's own words reach."""
    title_words = set(terms(doc.title))
    asked = " ".join(t for t in terms(question) if t not in title_words)
    hits = kb.search(asked, 50, doc_id=doc.doc_id)
    if not hits:
        return []
    best = hits[0].score
    return list(
        dict.fromkeys(
            h.section.split(" > ")[0] for h in hits if h.score >= RELEVANT_SHARE * best
        )
    )


def _one_dimension_plan(
    question: str, dimension: str, values: tuple[str, ...]
) -> CoveragePlan:
    taken: set[str] = set()
    return lint_plan(
        CoveragePlan(
            question=question,
            dimensions=(Dimension(name=dimension, values=values),),
            facets=tuple(facet_for_value(question, v, taken) for v in values),
        )
    )


def direct_plan(question: str) -> CoveragePlan:
    """The plan of a question answered without delegation."""
    return CoveragePlan(
        question=question,
        dimensions=(Dimension(name="answer", values=(question,)),),
        facets=(
            Facet(
                id="direct",
                title="Answer",
                brief=question,
                covers=(question,),
                agent_id=LEAD_AGENT,
            ),
        ),
        direct_answer=True,
    )


def answer_directly(
    kb: KnowledgeBase, question: str, plan: CoveragePlan, trace_id: str
) -> TaskResult:
    """One search, the best sentences quoted: the lead's own direct answer."""
    started, clock = datetime.now(UTC), time.perf_counter()
    hits = kb.search(question, 5)
    weights = idf_weights(kb, terms(question))
    extracts = best_sentences(
        [(h.passage_id, h.text) for h in hits], weights, DIRECT_ANSWER_SENTENCES
    )
    by_id = {h.passage_id: h for h in hits}
    findings = tuple(
        Finding(
            claim=e.sentence,
            quote=e.sentence,
            source=by_id[e.passage_id].source(),
            facet_ids=("direct",),
            values=(question,),
            confidence=round(e.matched, 3),
        )
        for e in extracts
    )
    return TaskResult(
        task_id=task_id_for(trace_id, 0, "direct"),
        agent_id=LEAD_AGENT,
        facet_id="direct",
        round=0,
        values=(question,),
        status="success" if findings else "partial",
        findings=findings,
        started_at=started,
        execution_time_s=time.perf_counter() - clock,
        confidence=max((f.confidence for f in findings), default=0.0),
        steps=1,
    )
