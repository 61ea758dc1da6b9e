"""LLM mode, `tools` protocol: a tool loop over the agent's tools, ending in findings.

Tool calls a model writes as text instead of native `tool_calls` are
recognised and run. A reply that is neither a tool call nor a valid answer gets
one corrective turn; an answer that still does not validate fails the task.
Near its budget, the subagent is asked to answer with what it has, and its
findings are kept.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Literal

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from runtime.kb import KnowledgeBase
from runtime.reliability import describe
from runtime.structured import (
    ModelOutputError,
    ainvoke_structured,
    call_model,
    parse,
)
from state.agents import AgentManifest
from state.usage import Usage
from subagents.budget import WRAP_UP_PROMPT, wrap_up_reason, wrapped_up
from subagents.contract import (
    SubagentAnswer,
    answer_output,
    invalid_output,
    pointing_schema,
)
from subagents.evidence import Excerpt, Ledger, record, shown_more
from subagents.gates import Gates
from subagents.state import AgentInput, AgentOutput, AgentState
from subagents.tools import make_tools

FINISH_PROMPT = (
    "Stop searching now. Report what you found as one JSON object: each finding "
    "names the evidence handle (E1, E2, ...) and the numbers of its sentences "
    "that show it."
)
STEPS_PER_TURN = 3
"""A turn is a model step, a tool step and the step that numbers the evidence."""
_ARGUMENT_KEYS = ("arguments", "args", "parameters")


def recursion_limit(max_turns: int) -> int:
    """Steps for `max_turns` turns and the final answer, with one to spare.

    LangGraph's `RemainingSteps` counts down from this limit; the loop stops
    calling tools when another turn would leave no step for the answer.
    """
    return STEPS_PER_TURN * max_turns + 2


def text_tool_calls(text: str, tools: Collection[str]) -> list[ToolCall]:
    """Tool calls written as JSON text: `{"name": "search", "arguments": {...}}`.

    Every JSON object in the text (fenced, tagged or bare) that names one of
    `tools` and carries its arguments counts; anything else is ignored.
    """
    decoder, at = json.JSONDecoder(), text.find("{")
    calls: list[ToolCall] = []
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            at = text.find("{", at + 1)
            continue
        args = _arguments(value) if isinstance(value, dict) else None
        if args is not None and value.get("name") in tools:
            calls.append(
                ToolCall(name=value["name"], args=args, id=f"text_{len(calls)}")
            )
        at = text.find("{", end)
    return calls


def _arguments(call: dict[str, object]) -> dict[str, object] | None:
    for key in _ARGUMENT_KEYS:
        args = call.get(key)
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                return None
        if isinstance(args, dict):
            return args
    return None


def with_text_tool_calls(message: AIMessage, tools: Collection[str]) -> AIMessage:
    """The message, its text tool calls turned into native ones if it has no others."""
    if message.tool_calls:
        return message
    calls = text_tool_calls(str(message.content), tools)
    if not calls:
        return message
    return AIMessage(
        "", tool_calls=calls, usage_metadata=message.usage_metadata, id=message.id
    )


def build_llm_agent(
    manifest: AgentManifest, model: BaseChatModel, kb: KnowledgeBase, gates: Gates
) -> CompiledStateGraph[AgentState, None, AgentInput, AgentOutput]:
    """A tool loop over the definition's allowed tools, capped at its max_turns.

    Every tool call passes the gates first; a denied one gets a tool message
    saying why, and the denial is kept.
    """
    available = make_tools(kb)
    tools: list[BaseTool] = [
        available[t] for t in manifest.allowed_tools if t in available
    ]
    names = [t.name for t in tools]
    agent_model = model.bind_tools(tools) if tools else model

    async def gated(
        request: ToolCallRequest,
        execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call, state = request.tool_call, request.state
        denial = gates.check(
            state["task"], call["name"], call["args"], state["evidence"]
        )
        if denial is None:
            return await execute(request)
        refused = ToolMessage(
            denial.message(), tool_call_id=call["id"], name=call["name"], status="error"
        )
        return Command(update={"messages": [refused], "denials": [denial]})

    def tool_calls(state: AgentState) -> int:
        return sum(isinstance(m, ToolMessage) for m in state["messages"])

    def spent(state: AgentState) -> str | None:
        return wrap_up_reason(state, tool_calls(state))

    def after_agent(state: AgentState) -> Literal["tools", "answer"]:
        """Run the calls asked for, unless the tool-call budget is used up."""
        last = state["messages"][-1]
        calls = isinstance(last, AIMessage) and last.tool_calls
        cap = state["budget"].tool_calls
        within = not cap or tool_calls(state) < cap
        return "tools" if calls and within else "answer"

    async def agent(state: AgentState) -> Command[str]:
        """One model turn; a reply that calls no tool is checked as the answer now."""
        reply = await call_model(agent_model, state["messages"])
        reply = with_text_tool_calls(reply, names)
        tokens = Usage.of(reply).tokens
        turn: dict[str, object] = {"messages": [reply], "tokens": tokens}
        after: AgentState = {
            **state,
            "messages": [*state["messages"], reply],
            "tokens": state.get("tokens", 0) + tokens,
        }
        if reply.tool_calls:
            return Command(update=turn, goto=after_agent(after))
        return Command(update=turn | await answer(after), goto=END)

    def number(state: AgentState) -> dict[str, object]:
        """Number what the tools just showed, and record it in the ledger."""
        since = max(
            (n for n, m in enumerate(state["messages"]) if isinstance(m, AIMessage)),
            default=0,
        )
        ledger, shown, numbered = state["evidence"], Ledger(), []
        for message in state["messages"][since + 1 :]:
            if isinstance(message, ToolMessage) and message.artifact is not None:
                excerpts: list[Excerpt] = message.artifact
                text, more = record(shown_more(ledger, shown), excerpts)
                shown = shown_more(shown, more)
                numbered.append(message.model_copy(update={"content": text}))
        return {"messages": numbered, "evidence": shown}

    def after_tools(state: AgentState) -> Literal["agent", "answer"]:
        room_for_a_turn = state["remaining_steps"] > STEPS_PER_TURN + 1
        return "agent" if room_for_a_turn and spent(state) is None else "answer"

    async def answer(state: AgentState) -> dict[str, object]:
        """Check the final answer; ask once more if there is none or it is invalid.

        A subagent stopped by its budget is asked for what it has, and its
        result says so.
        """
        messages, steps = state["messages"], len(state["messages"]) - 2
        last, reason = messages[-1], spent(state)
        if isinstance(last, AIMessage) and last.tool_calls:
            messages = messages[:-1]  # calls it may no longer make get no answer
        finish = WRAP_UP_PROMPT.format(reason=reason) if reason else FINISH_PROMPT
        try:
            if isinstance(last, AIMessage) and not last.tool_calls:
                given = parse(SubagentAnswer, last)
            else:
                ask = [*messages, HumanMessage(finish)]
                given, _ = await ainvoke_structured(
                    model, ask, SubagentAnswer, enforce=pointing(state)
                )
        except OutputParserException as err:
            correct = HumanMessage(
                "Your reply was neither a tool call nor a valid answer "
                f"({describe(err)}). {FINISH_PROMPT}"
            )
            try:
                given, _ = await ainvoke_structured(
                    model,
                    [*messages, correct],
                    SubagentAnswer,
                    repairs=0,
                    enforce=pointing(state),
                )
            except ModelOutputError as invalid:
                return invalid_output(invalid, steps)
        except ModelOutputError as invalid:
            return invalid_output(invalid, steps)
        note = wrapped_up(reason) if reason else None
        return await asyncio.to_thread(
            answer_output,
            given,
            state["task"],
            state["evidence"],
            kb,
            steps=steps,
            note=note,
        )

    def pointing(state: AgentState) -> dict[str, Any]:
        values = len(state["task"].values)
        return pointing_schema(SubagentAnswer, state["evidence"], values)

    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("agent", agent, destinations=("tools", "answer", END))
    builder.add_node("tools", ToolNode(tools, awrap_tool_call=gated))
    builder.add_node("number", number)
    builder.add_node("answer", answer)
    builder.add_edge(START, "agent")
    builder.add_edge("tools", "number")
    builder.add_conditional_edges("number", after_tools)
    builder.add_edge("answer", END)
    compiled = builder.compile(name=manifest.agent_id, checkpointer=False)
    return compiled.with_config(recursion_limit=recursion_limit(manifest.max_turns))
