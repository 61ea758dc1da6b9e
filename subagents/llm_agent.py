"""LLM mode, `tools` protocol: a model calling the agent's tools natively.

The driver of `subagents.loop` for models that call tools well. Tool calls a
model writes as text instead of native `tool_calls` are recognised and run. A
reply that is neither a tool call nor a valid answer gets one corrective
turn; an answer that still does not validate fails the task. Near its budget,
the subagent is asked to answer with what it has, and its findings are kept.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Sequence

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolCall
from langchain_core.tools import BaseTool

from runtime.reliability import describe
from runtime.structured import (
    ModelOutputError,
    ainvoke_structured,
    call_model,
    parse,
)
from state.agents import AgentManifest
from state.tasks import TaskDefinition
from state.usage import Usage
from subagents.budget import WRAP_UP_PROMPT, wrapped_up
from subagents.contract import (
    FINISH_PROMPT,
    SubagentAnswer,
    answer_output,
    invalid_output,
)
from subagents.loop import Loop, Move, Refusal
from subagents.state import AgentState, pointing

_ARGUMENT_KEYS = ("arguments", "args", "parameters")


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


class ToolCalling:
    """Drives the loop with a model's native tool calls (the `tools` protocol)."""

    def __init__(self, model: BaseChatModel, tools: Sequence[BaseTool]) -> None:
        self.model = model
        self.names = [t.name for t in tools]
        self.bound = model.bind_tools(list(tools)) if tools else model

    def turns(self, manifest: AgentManifest, task: TaskDefinition) -> int:
        """The definition's `max_turns`."""
        return manifest.max_turns

    async def act(self, state: AgentState, loop: Loop) -> Move:
        """One model turn; a reply that calls no tool is checked as the answer now."""
        reply = await call_model(self.bound, state["messages"])
        reply = with_text_tool_calls(reply, self.names)
        tokens = Usage.of(reply).tokens
        if reply.tool_calls:
            return Move(calls=reply, update={"tokens": tokens})
        after: AgentState = {
            **state,
            "messages": [*state["messages"], reply],
            "tokens": state.get("tokens", 0) + tokens,
        }
        output = await self.answer(after, loop, None)
        return Move(output=output, update={"messages": [reply], "tokens": tokens})

    def refuse(self, call: ToolCall, state: AgentState) -> Refusal | None:
        """Nothing: every call that passed the gates runs."""
        return None

    async def answer(
        self, state: AgentState, loop: Loop, reason: str | None
    ) -> dict[str, object]:
        """Check the final answer; ask once more if there is none or it is invalid.

        A subagent stopped by its budget is asked for what it has, and its
        result says so.
        """
        messages, steps = state["messages"], len(state["messages"]) - 2
        last = messages[-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            messages = messages[:-1]  # calls it may no longer make get no answer
        finish = WRAP_UP_PROMPT.format(reason=reason) if reason else FINISH_PROMPT
        try:
            if isinstance(last, AIMessage) and not last.tool_calls:
                given = parse(SubagentAnswer, last)
            else:
                ask = [*messages, HumanMessage(finish)]
                given, _ = await ainvoke_structured(
                    self.model,
                    ask,
                    SubagentAnswer,
                    enforce=pointing(SubagentAnswer, state),
                )
        except OutputParserException as err:
            correct = HumanMessage(
                "Your reply was neither a tool call nor a valid answer "
                f"({describe(err)}). {FINISH_PROMPT}"
            )
            try:
                given, _ = await ainvoke_structured(
                    self.model,
                    [*messages, correct],
                    SubagentAnswer,
                    repairs=0,
                    enforce=pointing(SubagentAnswer, state),
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
            loop.sources(state),
            steps=steps,
            note=note,
        )
