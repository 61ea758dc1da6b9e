"""gap_check: coverage by code, an independent enumeration, and what to re-send."""

from __future__ import annotations

import asyncio
from collections import Counter

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from nodes.resources import knowledge_base
from runtime.context import Context
from runtime.kb import KnowledgeBase
from runtime.models import lead_deadline, load_chat_model
from runtime.probe import probe
from runtime.structured import ainvoke_structured, schema_instructions
from runtime.telemetry import emit
from state.coverage import GapReport, count_by_value
from state.events import Event
from state.findings import Finding, normalize_text
from state.graph import ResearchState
from state.plan import CoveragePlan, Dimension
from state.tasks import TaskDefinition

PROBE_DIMENSION = "subject"
"""Where the corpus probe puts the documents it finds: they are subjects."""
MAX_ATTEMPTS_PER_VALUE = 2

ENUMERATE_PROMPT = """You check a research plan for breadth, independently of
whoever wrote it. Given the question and the dimensions and values the plan
names, list the values a complete answer must also cover that the plan does not
name: more values of its dimensions, or a dimension it missed. Name only values
that are distinct from the ones listed. If nothing is missing, return an empty list.

{format}"""


class Enumeration(BaseModel):
    """Values the enumerator adds, by dimension (existing or new)."""

    dimensions: list[Dimension] = Field(default_factory=list)


async def enumerate_missing(
    model: BaseChatModel, plan: CoveragePlan
) -> tuple[dict[str, list[str]], int]:
    """The lead's second, independent enumeration of values the plan lacks.

    Returns new values by dimension, and the tokens used.
    """
    named = "\n".join(f"- {d.name}: {', '.join(d.values)}" for d in plan.dimensions)
    messages = [
        SystemMessage(ENUMERATE_PROMPT.format(format=schema_instructions(Enumeration))),
        HumanMessage(f"Question: {plan.question}\n\nThe plan names:\n{named}"),
    ]
    answer, tokens = await ainvoke_structured(model, messages, Enumeration)
    known = {normalize_text(v) for v in plan.values}
    missing: dict[str, list[str]] = {}
    for dimension in answer.dimensions:
        for value in dimension.values:
            if normalize_text(value) not in known:
                known.add(normalize_text(value))
                missing.setdefault(dimension.name, []).append(value)
    return missing, tokens


def probe_missing(
    kb: KnowledgeBase, plan: CoveragePlan, findings: list[Finding], limit: int
) -> list[str]:
    """Titles of relevant documents that no finding cites and no value names."""
    verified = [f for f in findings if f.verified]
    found = probe(
        kb,
        plan.question,
        feedback=[(f.source.doc_id, f.quote) for f in verified],
        known={f.source.doc_id for f in verified},
        names=plan.values,
    )
    return [p.title for p in found.documents][:limit]


async def find_new_values(
    plan: CoveragePlan, findings: list[Finding], ctx: Context
) -> tuple[CoveragePlan, list[str], int, Event | None]:
    """The plan extended by the independent enumeration, and what it added.

    The lead enumerates in LLM mode; the corpus probe runs in every mode. A
    lead that fails here costs its enumeration only: the probe still runs and
    the failure is reported as an event. Returns the plan, the new values, the
    lead's tokens and that event, if any.
    """
    taken = {f.id for f in plan.facets}
    added: list[str] = []
    tokens, failure = 0, None
    model = await asyncio.to_thread(load_chat_model, ctx.lead_model)
    if model is not None:
        try:
            async with lead_deadline(ctx.lead_timeout_s, "enumerating"):
                missing, tokens = await enumerate_missing(model, plan)
        except GraphBubbleUp:
            raise
        except Exception as err:  # noqa: BLE001 - the probe still enumerates
            missing = {}
            failure = emit("COVERAGE", stage="enumerate", error=f"{err}")
        for dimension, values in missing.items():
            plan = plan.extended(dimension, values, taken)
            added += values
    kb = await asyncio.to_thread(knowledge_base, ctx.kb_path)
    found = await asyncio.to_thread(
        probe_missing, kb, plan, findings, ctx.max_subagents
    )
    return plan.extended(PROBE_DIMENSION, found, taken), added + found, tokens, failure


def measure(
    plan: CoveragePlan,
    findings: list[Finding],
    need: int,
    round_no: int,
    new_values: list[str],
    previous: GapReport | None,
) -> GapReport:
    """Coverage of every plan value, by count of verified findings."""
    counts = count_by_value(findings)
    covered = [v for v in plan.values if counts[v] >= need]
    uncovered = [v for v in plan.values if counts[v] < need]
    gained = previous is None or len(covered) > len(previous.covered)
    return GapReport(
        round=round_no,
        covered=tuple(covered),
        uncovered=tuple(uncovered),
        weak=tuple(v for v in uncovered if counts[v]),
        new_values=tuple(new_values),
        coverage=len(covered) / len(plan.values) if plan.values else 1.0,
        improved=gained or bool(new_values),
    )


async def gap_check(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Compute coverage, enumerate what the plan missed, queue the gaps.

    Stops (no pending tasks) when every value is covered, when a round added
    no coverage, or after `max_rounds` re-delegations.
    """
    ctx = runtime.context
    plan, round_no = state["plan"], state.get("round", 0)
    findings = state.get("findings", [])
    new_values: list[str] = []
    tokens, events = 0, []
    if not plan.direct_answer:
        plan, new_values, tokens, failure = await find_new_values(plan, findings, ctx)
        events += [failure] if failure else []
    gaps = state.get("gaps", [])
    report = measure(
        plan,
        findings,
        ctx.min_findings_per_value,
        round_no,
        new_values,
        gaps[-1] if gaps else None,
    )
    may_redelegate = not plan.direct_answer and round_no < ctx.max_rounds
    tasks: list[TaskDefinition] = []
    if may_redelegate and report.uncovered and report.improved:
        tasks = next_tasks(state, plan, list(report.uncovered), round_no + 1, ctx)
    event = emit(
        "COVERAGE",
        stage="gap_check",
        round=round_no,
        coverage=report.coverage,
        covered=len(report.covered),
        uncovered=len(report.uncovered),
        new_values=len(new_values),
        redelegate=len(tasks),
        added=", ".join(new_values) or None,
    )
    update: ResearchState = {
        "plan": plan,
        "gaps": [report],
        "pending": tasks,
        "events": [*events, event],
        "lead_tokens": tokens,
    }
    if tasks:
        update["round"] = round_no + 1
    return update


def next_tasks(
    state: ResearchState,
    plan: CoveragePlan,
    uncovered: list[str],
    round_no: int,
    ctx: Context,
) -> list[TaskDefinition]:
    """One task per facet for its uncovered values not yet tried too often."""
    attempts = Counter(v for r in state.get("results", {}).values() for v in r.values)
    by_facet: dict[str, list[str]] = {}
    for value in uncovered:
        owner = plan.owner(value)
        if owner is not None and attempts[value] < MAX_ATTEMPTS_PER_VALUE:
            by_facet.setdefault(owner.id, []).append(value)
    facets = {f.id: f for f in plan.facets}
    return [
        TaskDefinition.for_facet(
            facets[facet_id],
            question=plan.question,
            trace_id=state["trace_id"],
            round_no=round_no,
            timeout_s=ctx.task_timeout_s,
            values=tuple(values),
        )
        for facet_id, values in by_facet.items()
    ][: ctx.max_subagents]
