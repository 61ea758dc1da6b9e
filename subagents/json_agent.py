"""LLM mode, `json` protocol: each turn is one schema-constrained step.

For models that cannot call tools reliably (small local ones), a turn asks for
one JSON object, enforced by the server where it can be: search, read, or
finish with findings. The step's tool result comes back as the next message. A
model that asks for a search it already made is going round in circles: it is
asked to finish with what it was shown. A step that still does not validate
after one repair turn fails the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from pydantic import BaseModel, Field

from runtime.kb import KnowledgeBase
from runtime.structured import ModelOutputError, ainvoke_structured
from runtime.text import terms
from state.agents import AgentManifest
from state.findings import normalize_text
from subagents.budget import WRAP_UP_PROMPT, wrap_up_reason, wrapped_up
from subagents.contract import (
    MAX_FINDINGS,
    ClaimedFinding,
    SubagentAnswer,
    answer_output,
    invalid_output,
    pointing_schema,
)
from subagents.evidence import Excerpt, Ledger, handle, record
from subagents.gates import Gates
from subagents.llm_agent import FINISH_PROMPT
from subagents.state import AgentInput, AgentOutput, AgentState
from subagents.tools import call_tool, make_tools, tool_result

STEP_PROMPT = (
    "Answer with one JSON object for your next step: "
    '{"action": "search", "query": "<keywords>"} to search, '
    '{"action": "read", "evidence": "E1"} to read every sentence of evidence a '
    'search showed, or {"action": "finish", "findings": [{"evidence": "E1", '
    '"sentences": [2]}]} when you are done: each finding points at the evidence '
    "and the sentence numbers that show it."
)
SHOWN_PROMPT = (
    "You have been shown evidence {first} to {last}. If sentences there answer "
    "your facet, finish now and point at them."
)
SEARCHED_AGAIN = "You searched for that already; its evidence is above."
NO_KEYWORDS = "A search needs keywords from the question or your values."


class SubagentStep(BaseModel):
    """Your next step: search, read a passage, or finish with your findings."""

    action: Literal["search", "read", "finish"] = Field(
        description="search for passages, read one, or finish."
    )
    query: str = Field(
        default="", max_length=120, description="For search: a few keywords."
    )
    evidence: str = Field(
        default="",
        max_length=40,
        description="For read: the handle of evidence a search showed (E1, ...).",
    )
    findings: list[ClaimedFinding] = Field(
        default_factory=list,
        max_length=MAX_FINDINGS,
        description="For finish: findings, each pointing at evidence shown.",
    )


def step_prompt(evidence: Ledger) -> str:
    """What a model is asked before each step: the choices, and what it has seen."""
    if not evidence:
        return STEP_PROMPT
    last = handle(len(evidence) - 1)
    return f"{SHOWN_PROMPT.format(first=handle(0), last=last)} {STEP_PROMPT}"


def searched(messages: Sequence[AnyMessage]) -> set[str]:
    """The queries of the searches a model already asked for, in normal form."""
    steps = (
        SubagentStep.model_validate_json(str(m.content))
        for m in messages
        if isinstance(m, AIMessage)
    )
    return {normalize_text(s.query) for s in steps if s.action == "search"}


def recursion_limit(max_turns: int) -> int:
    """Steps for `max_turns` turns (one step each), the forced finish, one spare."""
    return max_turns + 2


def build_json_agent(
    manifest: AgentManifest, model: BaseChatModel, kb: KnowledgeBase, gates: Gates
) -> CompiledStateGraph[AgentState, None, AgentInput, AgentOutput]:
    """A loop of JSON steps over the definition's allowed tools, each gated."""
    tools = make_tools(kb)

    def spent(state: AgentState) -> str | None:
        tool_calls = sum(isinstance(m, AIMessage) for m in state["messages"])
        return wrap_up_reason(state, tool_calls)

    async def step(
        state: AgentState,
    ) -> Command[Literal["step", "finish", "__end__"]]:
        if spent(state) is not None:
            return Command(goto="finish")
        messages = [*state["messages"], HumanMessage(step_prompt(state["evidence"]))]
        steps = len(state["messages"]) - 2
        try:
            chosen, usage = await ainvoke_structured(
                model, messages, SubagentStep, enforce=pointing(SubagentStep, state)
            )
        except ModelOutputError as invalid:
            return Command(update=invalid_output(invalid, steps), goto="__end__")
        said = AIMessage(chosen.model_dump_json(exclude_defaults=True))
        if chosen.action == "finish":
            output = await asyncio.to_thread(
                answer_output,
                SubagentAnswer(findings=chosen.findings),
                state["task"],
                state["evidence"],
                kb,
                steps=steps + 1,
            )
            return Command(update=output, goto="__end__")
        args = (
            {"query": chosen.query}
            if chosen.action == "search"
            else {"handle": chosen.evidence}
        )
        update: dict[str, object] = {"tokens": usage.tokens}
        denial = gates.check(state["task"], chosen.action, args, state["evidence"])
        searching = chosen.action == "search"
        if denial is not None:
            result, update["denials"] = denial.message(), [denial]
        elif searching and not terms(chosen.query):
            result = NO_KEYWORDS
        elif searching and normalize_text(chosen.query) in searched(state["messages"]):
            result = SEARCHED_AGAIN
        else:
            result, update["evidence"] = await asyncio.to_thread(
                run_tool, chosen.action, args, state
            )
        update["messages"] = [said, HumanMessage(tool_result(chosen.action, result))]
        going_on = state["remaining_steps"] > 2 and result != SEARCHED_AGAIN
        return Command(update=update, goto="step" if going_on else "finish")

    def run_tool(
        action: str, args: dict[str, str], state: AgentState
    ) -> tuple[str, Ledger]:
        """The tool's output, its evidence numbered, and what it adds to the ledger."""
        call_id = f"step_{len(state['messages'])}"
        message = call_tool(tools[action], args, state, call_id)
        if message.artifact is None:
            return str(message.content), {}
        excerpts: list[Excerpt] = message.artifact
        return record(state["evidence"], excerpts)

    def pointing(schema: type[BaseModel], state: AgentState) -> dict[str, Any]:
        return pointing_schema(schema, state["evidence"], len(state["task"].values))

    async def finish(state: AgentState) -> dict[str, object]:
        reason = spent(state)
        finish = WRAP_UP_PROMPT.format(reason=reason) if reason else FINISH_PROMPT
        messages = [*state["messages"], HumanMessage(finish)]
        steps = len(state["messages"]) - 2
        try:
            answer, _ = await ainvoke_structured(
                model, messages, SubagentAnswer, enforce=pointing(SubagentAnswer, state)
            )
        except ModelOutputError as invalid:
            return invalid_output(invalid, steps)
        note = wrapped_up(reason) if reason else None
        return await asyncio.to_thread(
            answer_output,
            answer,
            state["task"],
            state["evidence"],
            kb,
            steps=steps,
            note=note,
        )

    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("step", step)
    builder.add_node("finish", finish)
    builder.add_edge(START, "step")
    builder.add_edge("finish", END)
    compiled = builder.compile(name=manifest.agent_id, checkpointer=False)
    return compiled.with_config(recursion_limit=recursion_limit(manifest.max_turns))
