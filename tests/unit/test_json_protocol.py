"""The `json` subagent protocol: one schema-constrained step a turn."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig

from state.agents import AgentManifest
from state.tasks import TaskDefinition
from subagents.json_agent import (
    NO_KEYWORDS,
    SEARCH_NEXT,
    SEARCHED_AGAIN,
    JsonSteps,
    as_turns,
)
from subagents.loop import agent_loop
from subagents.state import agent_input
from tests.support import agent_loop_of
from tests.unit.fakes import scripted

QUOTE = (
    "Music generators compose full songs, including vocals, from a text description."
)
TASK = TaskDefinition(
    task_id="t",
    run_id="r",
    agent_id="researcher",
    facet_id="f0",
    question="What is the impact of AI on creative industries?",
    brief="How AI changes music.",
    values=("music",),
    acceptance="a quoted finding",
)
SEARCH = {"action": "search", "query": "AI music"}
READ = {"action": "read", "evidence": "E1"}
FINISH = {
    "action": "finish",
    "findings": [
        {
            "claim": "Music generators compose songs from text.",
            "quote": QUOTE,
            "passage_id": "AI_in_music#0",
            "values": ["music"],
        }
    ],
}


def run(
    model: BaseChatModel, kb: str, max_turns: int = 4, task: TaskDefinition = TASK
) -> dict[str, Any]:
    manifest = AgentManifest(
        agent_id="researcher",
        description="Finds evidence.",
        tools=("search", "read"),
        max_turns=max_turns,
        system_prompt="Research.",
    )
    loop = agent_loop_of(manifest, JsonSteps(model), kb)
    loop = replace(loop, driver=JsonSteps(model, list(loop.tools.values())))
    start = agent_input("Research.", task)
    config: RunnableConfig = {"recursion_limit": loop.recursion_limit(task)}

    async def steps() -> dict[str, Any]:
        """The last step's update, and every message the steps added, in order."""
        said: list[Any] = []
        last: dict[str, Any] = {}
        updates = agent_loop.astream(start, config, context=loop, stream_mode="updates")
        async for update in updates:
            for node in update.values():
                last = node or {}
                said += last.get("messages", [])
        return {**last, "said": said}

    return asyncio.run(steps())


def test_search_read_finish(creative_kb: str) -> None:
    out = run(scripted(SEARCH, READ, FINISH), creative_kb)
    assert [f.quote for f in out["findings"]] == [QUOTE]
    assert out["steps"] == 5  # two steps and their results, then the finish
    assert out.get("failure") is None


def test_a_finding_that_points_gets_its_quote_from_code(creative_kb: str) -> None:
    pointing = {"action": "finish", "findings": [{"evidence": "E1", "sentences": [1]}]}
    out = run(scripted(SEARCH, READ, pointing), creative_kb)
    (finding,) = out["findings"]
    assert finding.source.passage_id == "AI_in_music#0"
    assert finding.quote == finding.claim == QUOTE


def test_a_search_without_keywords_runs_nothing(creative_kb: str) -> None:
    empty = {"action": "search", "query": "..."}
    out = run(scripted(empty, SEARCH, FINISH), creative_kb, 5)
    said = [str(m.content) for m in out["said"]]
    assert said[1] == NO_KEYWORDS
    assert said[3].startswith("E1: AI in music")
    assert [f.quote for f in out["findings"]] == [QUOTE]


def test_a_search_made_again_is_asked_to_finish(creative_kb: str) -> None:
    again = {"action": "search", "query": " ai  MUSIC"}
    answer = {"findings": [{"evidence": "E1", "sentences": [1]}]}
    out = run(scripted(SEARCH, again, answer), creative_kb, 5)
    said = [str(m.content) for m in out["said"]]
    assert said[-1] == SEARCHED_AGAIN
    assert [f.quote for f in out["findings"]] == [QUOTE]


def test_a_search_made_again_is_told_a_value_no_search_named_once(
    creative_kb: str,
) -> None:
    two = TASK.model_copy(update={"values": ("music", "film")})
    film = {"action": "search", "query": "AI film"}
    answer = {"findings": [{"evidence": "E1", "sentences": [1], "values": [1]}]}
    out = run(scripted(SEARCH, SEARCH, film, film, answer), creative_kb, 6, two)
    said = [str(m.content) for m in out["said"]]
    assert said[3] == SEARCH_NEXT.format(number=2, value="film")
    assert "AI in film" in said[5]  # the search it was told to make
    assert said[7] == SEARCHED_AGAIN  # circling again: it must finish
    assert [f.quote for f in out["findings"]] == [QUOTE]


def test_turns_stop_at_max_turns_then_it_must_finish(creative_kb: str) -> None:
    model = scripted(SEARCH, SEARCH, {"findings": FINISH["findings"]})
    out = run(model, creative_kb, max_turns=2)
    assert [f.quote for f in out["findings"]] == [QUOTE]
    assert out["steps"] == 4


def test_a_step_that_never_validates_fails_the_task(creative_kb: str) -> None:
    prose = "To answer this question, I'll need to gather data."
    out = run(scripted(prose, prose), creative_kb)
    assert out["failure"] == "invalid output"
    assert out["findings"] == []
    assert "SubagentStep" in out["errors"][0]


def test_a_repaired_step_goes_on(creative_kb: str) -> None:
    truncated = json.dumps(SEARCH)[:-1]
    out = run(scripted(truncated, SEARCH, FINISH), creative_kb)
    assert [f.quote for f in out["findings"]] == [QUOTE]


def test_the_model_reads_each_step_as_json_and_each_result_as_a_message() -> None:
    call = {"name": "search", "args": {"query": "AI music"}, "id": "step_2"}
    step = AIMessage(json.dumps(SEARCH), tool_calls=[call])
    result = ToolMessage("E1: AI in music", tool_call_id="step_2", name="search")
    seen = as_turns([HumanMessage("brief"), step, result])
    assert [type(m) for m in seen] == [HumanMessage, AIMessage, HumanMessage]
    assert isinstance(seen[1], AIMessage) and not seen[1].tool_calls
    assert seen[1].content == json.dumps(SEARCH)
    assert seen[2].content == "Result of search:\nE1: AI in music"
