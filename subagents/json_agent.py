"""LLM mode, `json` protocol: each turn is one schema-constrained step.

The driver of `subagents.loop` for models that cannot call tools reliably
(small local ones): a turn asks for one JSON object, enforced by the server
where it can be: search, read, call another of its tools (an MCP server's, the
user's, `web_fetch`) by name with its arguments, or finish with findings. The
loop runs the step as a tool call, through the same gates; the model sees its
result as the next message. The first step is code's: a search for each value
of the task, spelled as the brief spells it, so that the model first chooses
among its values' own passages instead of wording a search (a small model
searches for its brief, the question, and reads whatever that finds). A model
that asks for a search already made is going round in circles and is asked to
finish with what it was shown. A step that still does not validate after one
repair turn fails the task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from runtime.structured import ModelOutputError, ainvoke_structured
from runtime.text import keywords
from state.agents import AgentManifest
from state.findings import normalize_text
from state.tasks import TaskDefinition
from subagents.budget import WRAP_UP_PROMPT, wrapped_up
from subagents.contract import (
    FINISH_PROMPT,
    MAX_FINDINGS,
    ClaimedFinding,
    SubagentAnswer,
    answer_output,
    invalid_output,
)
from subagents.evidence import Ledger, handle
from subagents.loop import Loop, Move, Refusal, tool_calls_made
from subagents.state import AgentState, pointing
from subagents.tools import tool_result

SEARCH_STEP = '{"action": "search", "query": "<keywords>"} to search'
READ_STEP = (
    '{"action": "read", "evidence": "E1"} to read every sentence of evidence a '
    "search showed"
)
TOOL_STEP = (
    '{{"action": "tool", "tool": "<name>", "args": {{...}}}} to call one of your '
    "other tools:\n{tools}"
)
FINISH_STEP = (
    '{"action": "finish", "findings": [{"evidence": "E1", "sentences": [2]}]} '
    "when you are done: each finding points at the evidence and the sentence "
    "numbers that show it"
)
SHOWN_PROMPT = (
    "You have been shown evidence {first} to {last}. If sentences there answer "
    "your facet, finish now and point at them."
)
SEARCHED_AGAIN = "You searched for that already; its evidence is above."
NO_KEYWORDS = "A search needs keywords from the question or your values."
MAX_QUERY_CHARS = 120


class SubagentStep(BaseModel):
    """Your next step: search, read a passage, call a tool, or finish."""

    action: Literal["search", "read", "tool", "finish"] = Field(
        description="search for passages, read one, call another tool, or finish."
    )
    tool: str = Field(default="", max_length=120, description="For tool: its name.")
    args: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="For tool: its arguments."
    )
    query: str = Field(
        default="",
        max_length=MAX_QUERY_CHARS,
        description="For search: a few keywords.",
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


def step_prompt(evidence: Ledger, tools: Sequence[BaseTool]) -> str:
    """What a model is asked before each step: its choices, and what it has seen.

    The choices are the agent's own: search and read where it has them, its
    other tools by name with their arguments, and finish.
    """
    names = {t.name for t in tools}
    others = [t for t in tools if t.name not in ("search", "read")]
    listed = "\n".join(
        f"- {t.name}({', '.join(t.args)}): {t.description.splitlines()[0]}"
        for t in others
    )
    choices = [
        *([SEARCH_STEP] if "search" in names else []),
        *([READ_STEP] if "read" in names else []),
        *([TOOL_STEP.format(tools=listed)] if others else []),
        FINISH_STEP,
    ]
    asked = f"Answer with one JSON object for your next step: {'; '.join(choices)}."
    if not evidence:
        return asked
    last = handle(len(evidence) - 1)
    return f"{SHOWN_PROMPT.format(first=handle(0), last=last)} {asked}"


def searched(messages: Sequence[AnyMessage]) -> list[str]:
    """The queries of the searches a model made, in order, in normal form."""
    return [
        normalize_text(str(call["args"].get("query", "")))
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
        if call["name"] == "search"
    ]


OPENING_PASSAGES = 5
"""Passages the opening searches show in all, shared among the task's values."""


def opening_searches(values: Sequence[str]) -> AIMessage:
    """A search for each value, as the task spells it: the step a model would copy.

    The passages shown (OPENING_PASSAGES) are shared among the values, at least
    one each.
    """
    k = max(1, OPENING_PASSAGES // len(values))
    steps = [SubagentStep(action="search", query=v[:MAX_QUERY_CHARS]) for v in values]
    calls = [
        ToolCall(name="search", args={"query": s.query, "k": k}, id=f"open_{n}")
        for n, s in enumerate(steps)
    ]
    said = "\n".join(s.model_dump_json(exclude_defaults=True) for s in steps)
    return AIMessage(said, tool_calls=calls)


def as_turns(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """The conversation as a model without tool messages reads it.

    Each step it took is its JSON; each tool result comes back as a message.
    """
    turns: list[AnyMessage] = []
    for message in messages:
        if isinstance(message, AIMessage):
            turns.append(AIMessage(message.content))
        elif isinstance(message, ToolMessage):
            turns.append(
                HumanMessage(tool_result(str(message.name), str(message.content)))
            )
        else:
            turns.append(message)
    return turns


class JsonSteps:
    """Drives the loop with one JSON step a turn (the `json` protocol)."""

    def __init__(self, model: BaseChatModel, tools: Sequence[BaseTool] = ()) -> None:
        self.model, self.tools = model, list(tools)
        self.searches = any(t.name == "search" for t in self.tools)

    def turns(self, manifest: AgentManifest, task: TaskDefinition) -> int:
        """The definition's `max_turns`."""
        return manifest.max_turns

    async def act(self, state: AgentState, loop: Loop) -> Move:
        """The next step: code's opening searches, then the model's choice.

        The model chooses a search or read to run, or finishes with findings.
        """
        values = state["task"].values
        if not tool_calls_made(state) and values and self.searches:
            return Move(calls=opening_searches(values))
        messages = [
            *as_turns(state["messages"]),
            HumanMessage(step_prompt(state["evidence"], self.tools)),
        ]
        steps = len(state["messages"]) - 2
        try:
            chosen, usage = await ainvoke_structured(
                self.model,
                messages,
                SubagentStep,
                enforce=self.enforced(state),
            )
        except ModelOutputError as invalid:
            return Move(output=invalid_output(invalid, steps))
        if chosen.action == "finish":
            output = await asyncio.to_thread(
                answer_output,
                SubagentAnswer(findings=chosen.findings),
                state["task"],
                state["evidence"],
                loop.sources(state),
                steps=steps + 1,
            )
            return Move(output=output)
        steps_as_calls: dict[str, tuple[str, dict[str, Any]]] = {
            "search": ("search", {"query": chosen.query}),
            "read": ("read", {"handle": chosen.evidence}),
            "tool": (chosen.tool, dict(chosen.args)),
        }
        name, args = steps_as_calls[chosen.action]
        call = ToolCall(name=name, args=args, id=f"step_{len(state['messages'])}")
        said = AIMessage(
            chosen.model_dump_json(exclude_defaults=True), tool_calls=[call]
        )
        return Move(calls=said, update={"tokens": usage.tokens})

    def enforced(self, state: AgentState) -> dict[str, Any]:
        """The step's schema as the server enforces it: only the agent's own choices.

        An agent without search or read cannot choose them; one without other
        tools cannot choose `tool`, and one with them only names them.
        """
        schema = pointing(SubagentStep, state)
        names = [t.name for t in self.tools]
        others = [n for n in names if n not in ("search", "read")]
        actions: list[str] = [a for a in ("search", "read") if a in names]
        actions += ["tool"] * bool(others) + ["finish"]
        fields = schema["properties"]
        fields["action"] = fields["action"] | {"enum": actions}
        if others:
            fields["tool"] = fields["tool"] | {"enum": ["", *others]}
        return schema

    def refuse(self, call: ToolCall, state: AgentState) -> Refusal | None:
        """A search with no keywords, or one already made: then it must finish."""
        if call["name"] != "search":
            return None
        query = str(call["args"].get("query", ""))
        if not keywords(query):
            return Refusal(NO_KEYWORDS)
        if normalize_text(query) in searched(state["messages"][:-1]):
            return Refusal(SEARCHED_AGAIN, final=True)
        return None

    async def answer(
        self, state: AgentState, loop: Loop, reason: str | None
    ) -> dict[str, object]:
        """Ask for the findings, pointing at the evidence shown."""
        finish = WRAP_UP_PROMPT.format(reason=reason) if reason else FINISH_PROMPT
        messages = [*as_turns(state["messages"]), HumanMessage(finish)]
        steps = len(state["messages"]) - 2
        try:
            given, _ = await ainvoke_structured(
                self.model,
                messages,
                SubagentAnswer,
                enforce=pointing(SubagentAnswer, state),
            )
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
