"""One compiled subgraph per subagent definition, with its own message state.

A subagent sees only `[system prompt, brief]` and its own tool calls; what
leaves it is a list of typed findings. In LLM mode it is a tool loop capped at
`max_turns`; in extractive mode the same tools are called by fixed rules.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import operator
from typing import Annotated, Literal

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from runtime.extractive import best_sentences, idf_weights
from runtime.kb import KnowledgeBase, terms
from runtime.structured import (
    ModelOutputError,
    ainvoke_structured,
    parse,
    schema_instructions,
    tokens_used,
)
from state.agents import AgentManifest
from state.findings import Finding, normalize_text
from state.tasks import TaskDefinition
from subagents.tools import make_tools

PASSAGES_READ_PER_VALUE = 3
Hit = dict[str, str]
"""A search hit as the `search` tool returns it: passage_id, title, section, text."""
REPORT_PROMPT = (
    "Stop searching now. Report what you found as one JSON object, with quotes "
    "copied verbatim from the passages you read."
)


class SubagentState(TypedDict):
    """A subagent's private state; none of it reaches the coordinator.

    Attributes:
        messages: The subagent's own conversation, starting at its brief.
        task: The task it works on.
        findings: Typed findings, set when it reports.
        errors: What went wrong along the way (bad quotes, unknown passages).
        turns: Model turns taken, against the definition's `max_turns`.
        tokens: Model tokens used.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: TaskDefinition
    findings: list[Finding]
    errors: Annotated[list[str], operator.add]
    turns: int
    tokens: int


class ReportedFinding(BaseModel):
    """A finding as a model reports it, before it is checked."""

    claim: str = Field(description="One sentence: what the quote shows.")
    quote: str = Field(description="Verbatim text from the passage.")
    passage_id: str = Field(description="The id of the passage quoted.")
    values: list[str] = Field(default_factory=list, description="Values supported.")
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


class SubagentReport(BaseModel):
    """The JSON object a subagent ends with."""

    findings: list[ReportedFinding] = Field(default_factory=list)


def brief(task: TaskDefinition) -> str:
    """The one message a subagent starts from."""
    values = "\n".join(f"- {v}" for v in task.values)
    done_when = " ".join(task.constraints)
    return (
        f"Question: {task.context}\n\nYour facet: {task.objective}\n\n"
        f"Values to cover:\n{values}\n\nDone when: {done_when}\n\n"
        f"Return findings as JSON:\n{schema_instructions(SubagentReport)}"
    )


def to_finding(
    raw: ReportedFinding, task: TaskDefinition, kb: KnowledgeBase
) -> Finding | str:
    """Check a reported finding against the task and the knowledge base.

    Returns the typed finding, or the reason it was refused.
    """
    passage = kb.passage(raw.passage_id)
    if passage is None:
        return f"unknown passage {raw.passage_id!r}"
    spelled = {normalize_text(v): v for v in task.values}
    named = (spelled.get(normalize_text(v)) for v in raw.values)
    values = tuple(dict.fromkeys(v for v in named if v is not None))
    if not values and len(task.values) == 1:
        values = task.values
    if not values:
        return f"finding names none of the task's values: {raw.values}"
    return Finding(
        claim=raw.claim,
        quote=raw.quote,
        source=passage.source(),
        facet_ids=(task.facet_id,),
        values=values,
        confidence=raw.confidence,
    )


def check_report(
    reported: SubagentReport, task: TaskDefinition, kb: KnowledgeBase
) -> tuple[list[Finding], list[str]]:
    """The findings of a report that pass `to_finding`, and why the others did not."""
    findings: list[Finding] = []
    errors: list[str] = []
    for raw in reported.findings:
        checked = to_finding(raw, task, kb)
        if isinstance(checked, str):
            errors.append(checked)
        else:
            findings.append(checked)
    return findings, errors


def final_report(message: BaseMessage) -> SubagentReport | None:
    """The report a last model answer holds, or None if it holds no valid one."""
    if not isinstance(message, AIMessage) or message.tool_calls:
        return None
    try:
        return parse(SubagentReport, message)
    except OutputParserException:
        return None


def build_llm_subgraph(
    manifest: AgentManifest, model: BaseChatModel, kb: KnowledgeBase
) -> CompiledStateGraph[SubagentState, None, SubagentState, SubagentState]:
    """A tool loop over the definition's allowed tools, ending in findings."""
    available = make_tools(kb)
    tools: list[BaseTool] = [
        available[t] for t in manifest.allowed_tools if t in available
    ]
    agent_model = model.bind_tools(tools) if tools else model

    async def agent(state: SubagentState) -> dict[str, object]:
        answer = await agent_model.ainvoke(state["messages"])
        return {
            "messages": [answer],
            "turns": state.get("turns", 0) + 1,
            "tokens": state.get("tokens", 0) + tokens_used(answer),
        }

    def after_agent(state: SubagentState) -> Literal["tools", "report"]:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "report"

    def after_tools(state: SubagentState) -> Literal["agent", "report"]:
        return "report" if state.get("turns", 0) >= manifest.max_turns else "agent"

    async def report(state: SubagentState) -> dict[str, object]:
        task, tokens = state["task"], state.get("tokens", 0)
        reported = final_report(state["messages"][-1])
        if reported is None:
            ask = [*state["messages"], HumanMessage(REPORT_PROMPT)]
            try:
                reported, used = await ainvoke_structured(model, ask, SubagentReport)
            except ModelOutputError as err:
                return {"findings": [], "errors": [str(err)], "tokens": tokens}
            tokens += used
        findings, errors = await asyncio.to_thread(check_report, reported, task, kb)
        return {"findings": findings, "errors": errors, "tokens": tokens}

    builder = StateGraph(SubagentState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("report", report)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent)
    builder.add_conditional_edges("tools", after_tools)
    builder.add_edge("report", END)
    return builder.compile(name=manifest.agent_id, checkpointer=False)


def build_extractive_subgraph(
    manifest: AgentManifest, kb: KnowledgeBase, findings_per_value: int
) -> CompiledStateGraph[SubagentState, None, SubagentState, SubagentState]:
    """The same tools, called by rule: search each value, read, cut sentences."""
    tools = make_tools(kb)
    missing = {"search", "read"} - set(manifest.allowed_tools)
    if missing:
        raise ValueError(
            f"extractive mode needs tools {sorted(missing)}, which "
            f"{manifest.agent_id!r} may not use"
        )
    call_ids = itertools.count()

    def call(name: str, args: dict[str, object], log: list[AnyMessage]) -> str:
        """Call a tool as a model would, logging the request and the answer."""
        call_id = f"call_{next(call_ids)}"
        output = str(tools[name].invoke(args))
        log.append(
            AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])
        )
        log.append(ToolMessage(output, tool_call_id=call_id, name=name))
        return output

    def search(value: str, question: str, log: list[AnyMessage]) -> list[Hit]:
        """Hits on `value`'s own pages for the question, else on its words alone."""
        query = {"query": f"{value} {question}", "k": 10}
        hits = _about(value, json.loads(call("search", query, log)))
        if hits:
            return hits
        exact = {"query": value, "k": 10, "match_all": True}
        return list(json.loads(call("search", exact, log)))

    def research(state: SubagentState) -> dict[str, object]:
        task = state["task"]
        log: list[AnyMessage] = []
        findings: list[Finding] = []
        for value in task.values:
            weights = idf_weights(kb, [*terms(task.context), *terms(value)])
            hits = search(value, task.context, log)
            read = []
            for hit in _best_hits(hits, weights, PASSAGES_READ_PER_VALUE):
                passage = json.loads(
                    call("read", {"passage_id": hit["passage_id"]}, log)
                )
                if "text" in passage:
                    read.append((passage["passage_id"], passage["text"]))
            for extract in best_sentences(read, weights, findings_per_value):
                raw = ReportedFinding(
                    claim=extract.sentence,
                    quote=extract.sentence,
                    passage_id=extract.passage_id,
                    values=[value],
                    confidence=round(extract.matched, 3),
                )
                finding = to_finding(raw, task, kb)
                if isinstance(finding, Finding):
                    findings.append(finding)
        return {"messages": log, "findings": findings, "turns": 1}

    builder = StateGraph(SubagentState)
    builder.add_node("research", research)
    builder.add_edge(START, "research")
    builder.add_edge("research", END)
    return builder.compile(name=manifest.agent_id, checkpointer=False)


def _about(value: str, hits: list[Hit]) -> list[Hit]:
    """The hits whose title and section hold every word of `value`."""
    wanted = set(terms(value))
    return [h for h in hits if wanted <= set(terms(f"{h['title']} {h['section']}"))]


def _best_hits(hits: list[Hit], weights: dict[str, float], n: int) -> list[Hit]:
    """The `n` search hits whose snippets carry most query weight."""

    def weight(hit: Hit) -> float:
        words = set(terms(hit["text"]))
        return sum(w for t, w in weights.items() if t in words)

    return sorted(hits, key=lambda h: (-weight(h), h["passage_id"]))[:n]
