"""The LLM subagent loop: capped turns, and only its output schema crosses back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from runtime.kb import KnowledgeBase
from state.agents import AgentManifest
from state.tasks import TaskDefinition
from subagents.contract import brief
from subagents.llm_agent import FINISH_PROMPT, build_llm_agent
from subagents.state import AgentInput

TASK = TaskDefinition(
    task_id="t",
    trace_id="r",
    agent_id="searcher",
    facet_id="f0",
    question="What is the impact of AI on creative industries?",
    brief="How AI changes music.",
    values=("music",),
    acceptance="a quoted finding",
)


class EndlessSearcher(BaseChatModel):
    """Asks for a search on every turn; answers an empty report when told to stop."""

    turns: int = 0
    finish_requests: int = 0

    @property
    def _llm_type(self) -> str:
        return "endless-searcher"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> EndlessSearcher:
        return self

    def _generate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        if messages[-1].content == FINISH_PROMPT:
            self.finish_requests += 1
            message = AIMessage('{"findings": []}')
        else:
            self.turns += 1
            call = {
                "name": "search",
                "args": {"query": "music"},
                "id": f"c{self.turns}",
            }
            message = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])


def manifest(max_turns: int) -> AgentManifest:
    return AgentManifest(
        agent_id="searcher",
        description="Searches.",
        tools=("search", "read"),
        max_turns=max_turns,
        system_prompt="Search.",
    )


def run(model: EndlessSearcher, max_turns: int, kb: str) -> dict[str, Any]:
    agent = build_llm_agent(manifest(max_turns), model, KnowledgeBase(kb))
    start: AgentInput = {
        "messages": [SystemMessage("Search."), HumanMessage(brief(TASK))],
        "task": TASK,
    }
    return dict(asyncio.run(agent.ainvoke(start)))


def test_turns_stop_at_max_turns_then_the_agent_must_answer(creative_kb: str) -> None:
    for max_turns in (1, 3):
        model = EndlessSearcher()
        out = run(model, max_turns, creative_kb)
        assert model.turns == max_turns
        assert model.finish_requests == 1
        assert out["steps"] == 2 * max_turns


def test_only_the_output_schema_leaves_the_subagent(creative_kb: str) -> None:
    out = run(EndlessSearcher(), 2, creative_kb)
    assert set(out) <= {"findings", "errors", "usage", "steps", "failure"}
    assert "messages" not in out and "task" not in out
