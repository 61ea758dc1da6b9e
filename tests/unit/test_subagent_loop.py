"""The LLM subagent loop: capped turns, and only its output schema crosses back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool

from runtime.kb import KnowledgeBase
from state.agents import AgentManifest
from state.tasks import TaskDefinition
from subagents.contract import FINISH_PROMPT
from subagents.evidence import Excerpt
from subagents.gates import GatePolicy, Gates
from subagents.llm_agent import ToolCalling, text_tool_calls
from subagents.loop import Loop
from subagents.state import agent_input
from subagents.tools import ECHOED, as_evidence, make_tools
from tests.support import agent_loop_of
from tests.unit.fakes import AnsweringModel, Scripted

TASK = TaskDefinition(
    task_id="t",
    run_id="r",
    agent_id="searcher",
    facet_id="f0",
    question="What is the impact of AI on creative industries?",
    brief="How AI changes music.",
    values=("music",),
    acceptance="a quoted finding",
)


class EndlessSearcher(AnsweringModel):
    """Asks for a search on every turn; answers an empty report when told to stop."""

    turns: int = 0
    finish_requests: int = 0

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """One more search, or an empty report once told to finish."""
        if messages[-1].content == FINISH_PROMPT:
            self.finish_requests += 1
            return AIMessage('{"findings": []}')
        self.turns += 1
        call = {"name": "search", "args": {"query": "music"}, "id": f"c{self.turns}"}
        return AIMessage("", tool_calls=[call])


def manifest(max_turns: int) -> AgentManifest:
    return AgentManifest(
        agent_id="searcher",
        description="Searches.",
        tools=("search", "read"),
        max_turns=max_turns,
        system_prompt="Search.",
    )


def run(model: EndlessSearcher, max_turns: int, kb: str) -> dict[str, Any]:
    return dict(asyncio.run(tool_loop(model, max_turns, kb)))


async def tool_loop(model: Any, max_turns: int, kb: str) -> dict[str, Any]:
    """Run the agent loop with the model calling tools natively."""
    searcher = manifest(max_turns)
    loop = agent_loop_of(searcher, ToolCalling(model, []), kb)
    loop = agent_loop_of(searcher, ToolCalling(model, list(loop.tools.values())), kb)
    return dict(await loop.run(agent_input("Search.", TASK)))


def test_turns_stop_at_max_turns_then_the_agent_must_answer(creative_kb: str) -> None:
    for max_turns in (1, 3):
        model = EndlessSearcher()
        out = run(model, max_turns, creative_kb)
        assert model.turns == max_turns
        assert model.finish_requests == 1
        assert out["steps"] == 2 * max_turns


def test_only_the_output_schema_leaves_the_subagent(creative_kb: str) -> None:
    out = run(EndlessSearcher(), 2, creative_kb)
    leaving = {"findings", "errors", "usage", "steps", "failure", "denials", "cited"}
    assert set(out) <= leaving
    assert "messages" not in out and "task" not in out


class TextCaller(Scripted):
    """Writes its tool calls as text, as small models do."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> TextCaller:
        return self


def test_text_tool_calls_are_recognised() -> None:
    text = (
        'I will search.\n```json\n{"name": "search", "arguments": {"query": "music"}}'
        '\n```\n<tool_call>{"name": "read", '
        '"arguments": "{\\"passage_id\\": \\"x#1\\"}"}'
        '</tool_call> {"name": "delete_all", "arguments": {}} {"broken": '
    )
    calls = text_tool_calls(text, ["search", "read"])
    assert [(c["name"], c["args"]) for c in calls] == [
        ("search", {"query": "music"}),
        ("read", {"passage_id": "x#1"}),
    ]


def test_a_text_tool_call_runs_the_tool(creative_kb: str) -> None:
    written = '{"name": "search", "arguments": {"query": "music generators"}}'
    answer = (
        '{"findings": [{"claim": "Music generators compose songs from text.", '
        '"quote": "Music generators compose full songs", '
        '"passage_id": "AI_in_music#0", "values": ["music"]}]}'
    )
    model = TextCaller(messages=iter([AIMessage(written), AIMessage(answer)]))
    out = asyncio.run(tool_loop(model, 3, creative_kb))
    assert out["steps"] == 3  # the call, its result, the answer
    assert [f.source.passage_id for f in out["findings"]] == ["AI_in_music#0"]


def test_prose_instead_of_an_answer_gets_one_correction_then_fails(
    creative_kb: str,
) -> None:
    prose = AIMessage("I found many interesting things about music.")
    model = TextCaller(messages=iter([prose, prose, prose]))
    out = asyncio.run(tool_loop(model, 3, creative_kb))
    assert out["failure"] == "invalid output"
    assert out["findings"] == []


def broken(query: str) -> str:
    """A user's tool with a bug."""
    raise KeyError(query)


class SearchesThenBreaksATool(AnsweringModel):
    """Searches, calls the broken tool, then points at the first sentence found."""

    turn: int = 0
    told: str = ""

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self.turn += 1
        if self.turn == 1:
            call = {"name": "search", "args": {"query": "music"}, "id": "c1"}
            return AIMessage("", tool_calls=[call])
        if self.turn == 2:
            call = {"name": "broken", "args": {"query": "music"}, "id": "c2"}
            return AIMessage("", tool_calls=[call])
        self.told = str(messages[-1].content)
        return AIMessage('{"findings": [{"evidence": "E1", "sentences": [1]}]}')


def with_broken_tool(model: AnsweringModel, kb: str) -> dict[str, Any]:
    """Run the loop with the knowledge base's search and the broken tool."""
    search = make_tools(KnowledgeBase(kb))["search"]
    tools = {"search": search, "broken": as_evidence(tool(broken), "broken")}
    user = manifest(4).model_copy(update={"tools": ("search", "broken")})
    gates = Gates(user, GatePolicy(approved=frozenset({"broken"})), frozenset(tools))
    driver = ToolCalling(model, list(tools.values()))
    loop = Loop(user, driver, tools, gates, KnowledgeBase(kb))
    return dict(asyncio.run(loop.run(agent_input("Search.", TASK))))


def test_a_tool_that_raises_is_an_error_the_agent_sees_not_a_lost_attempt(
    creative_kb: str,
) -> None:
    model = SearchesThenBreaksATool()
    out = with_broken_tool(model, creative_kb)
    assert model.told == "broken failed: 'music'"
    assert len(out["findings"]) == 1 and out["failure"] is None
    assert out["errors"] == ["broken failed: 'music'"]


class OnlyTheBrokenTool(AnsweringModel):
    """Calls the broken tool, then answers that it found nothing."""

    turn: int = 0

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self.turn += 1
        if self.turn == 1:
            call = {"name": "broken", "args": {"query": "music"}, "id": "c1"}
            return AIMessage("", tool_calls=[call])
        return AIMessage('{"findings": []}')


def test_nothing_found_after_a_tool_raised_fails_as_that_tool_did(
    creative_kb: str,
) -> None:
    out = with_broken_tool(OnlyTheBrokenTool(), creative_kb)
    assert out["findings"] == [] and out["failure"] == "error"
    assert out["errors"] == ["broken failed: 'music'"]


CLAIM = "AI music generators replaced every human composer in 2023"


def echo(query: str) -> str:
    """A tool that repeats its query when it finds nothing."""
    return f"No results were found for: {query}."


class ClaimsThroughAnEcho(AnsweringModel):
    """Searches with its claim as the query, then cites what came back."""

    turn: int = 0

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self.turn += 1
        if self.turn == 1:
            call = {"name": "echo", "args": {"query": CLAIM}, "id": "c1"}
            return AIMessage("", tool_calls=[call])
        finding = {"evidence": "E1", "sentences": [1], "claim": CLAIM}
        return AIMessage(json.dumps({"findings": [finding]}))


def test_a_tool_repeating_the_models_words_does_not_make_them_evidence(
    creative_kb: str,
) -> None:
    tools = {"echo": as_evidence(tool(echo), "echo")}
    user = manifest(4).model_copy(update={"tools": ("echo",)})
    gates = Gates(user, GatePolicy(approved=frozenset({"echo"})), frozenset(tools))
    driver = ToolCalling(ClaimsThroughAnEcho(), list(tools.values()))
    loop = Loop(user, driver, tools, gates, KnowledgeBase(creative_kb))
    out: dict[str, Any] = dict(asyncio.run(loop.run(agent_input("Search.", TASK))))
    assert not any("composer" in f.quote for f in out["findings"])


def shown_by_echo(query: str) -> list[Excerpt]:
    """What the echoing tool, wrapped as tools are, shows for `query`."""
    call = {"type": "tool_call", "name": "echo", "args": {"query": query}, "id": "c"}
    message = asyncio.run(as_evidence(tool(echo), "echo").ainvoke(call))
    return list(message.artifact)


def test_tool_evidence_blanks_a_long_argument_it_repeats_but_not_a_name() -> None:
    [repeated] = shown_by_echo(CLAIM)
    assert repeated["record"] is not None
    assert "composer" not in repeated["record"].text
    assert ECHOED in " ".join(repeated["sentences"])
    [named] = shown_by_echo("Storm Eunice")
    assert "Storm Eunice" in " ".join(named["sentences"])
