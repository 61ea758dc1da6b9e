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
    OPENING_PASSAGES,
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
    out = run(scripted(SEARCH, READ, FINISH), creative_kb, 5)
    assert [f.quote for f in out["findings"]] == [QUOTE]
    # the opening search, the model's search and read, their results, the finish
    assert out["steps"] == 7
    assert out.get("failure") is None


def test_the_first_step_is_a_search_by_code_for_each_value(creative_kb: str) -> None:
    two = TASK.model_copy(update={"values": ("music", "film")})
    pointing = [{"evidence": "E1", "sentences": [1], "values": [1]}]
    model = scripted({"action": "finish", "findings": pointing})
    out = run(model, creative_kb, 4, two)
    opening, *shown = out["said"][:3]
    queries = [(c["args"]["query"], c["args"]["k"]) for c in opening.tool_calls]
    each = OPENING_PASSAGES // 2
    assert queries == [("music", each), ("film", each)]
    assert "AI in music" in shown[0].content and "AI in film" in shown[1].content
    assert [f.quote for f in out["findings"]] == [QUOTE]
    assert next(model.messages, None) is None  # its one answer: the finish


def test_a_finding_that_points_gets_its_quote_from_code(creative_kb: str) -> None:
    pointing = {"action": "finish", "findings": [{"evidence": "E1", "sentences": [1]}]}
    out = run(scripted(pointing), creative_kb)
    (finding,) = out["findings"]
    assert finding.source.passage_id == "AI_in_music#0"
    assert finding.quote == finding.claim == QUOTE


def test_a_search_without_keywords_runs_nothing(creative_kb: str) -> None:
    empty = {"action": "search", "query": "..."}
    out = run(scripted(empty, SEARCH, FINISH), creative_kb, 5)
    said = [str(m.content) for m in out["said"]]
    assert said[3] == NO_KEYWORDS
    assert said[5].startswith("E1: AI in music")  # shown by the opening search too
    assert [f.quote for f in out["findings"]] == [QUOTE]


def test_a_search_made_again_is_asked_to_finish(creative_kb: str) -> None:
    again = {"action": "search", "query": " MUSIC "}  # the opening search's
    answer = {"findings": [{"evidence": "E1", "sentences": [1]}]}
    out = run(scripted(again, answer), creative_kb, 5)
    said = [str(m.content) for m in out["said"]]
    assert said[-1] == SEARCHED_AGAIN
    assert [f.quote for f in out["findings"]] == [QUOTE]


def test_turns_stop_at_max_turns_then_it_must_finish(creative_kb: str) -> None:
    model = scripted(SEARCH, {"findings": FINISH["findings"]})
    out = run(model, creative_kb, max_turns=2)
    assert [f.quote for f in out["findings"]] == [QUOTE]
    assert out["steps"] == 4  # two turns: the opening search and one of its own


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
