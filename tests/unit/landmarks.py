"""Eight parallel subagents on the landmarks corpus, each with its own behaviour."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2 as httpx
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from tests.unit.fakes import FakeResearcher, values_in_brief

QUESTION = "What are the landmarks of Eastport?"
LANDMARKS = (
    "harbour",
    "glacier",
    "orchard",
    "lighthouse",
    "vineyard",
    "quarry",
    "canal",
    "meadow",
)
PLAN: dict[str, Any] = {
    "direct_answer": False,
    "dimensions": [{"name": "landmark", "values": list(LANDMARKS)}],
    "facets": [
        {
            "id": f"f{i}",
            "title": v.title(),
            "brief": f"The {v} of Eastport.",
            "values": [v],
        }
        for i, v in enumerate(LANDMARKS)
    ],
}
NOTHING_MORE: dict[str, Any] = {"dimensions": []}
REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def the_value(messages: list[BaseMessage]) -> str:
    """The one value a landmark task's brief asks for."""
    brief = next(m for m in messages if isinstance(m, HumanMessage))
    return values_in_brief(str(brief.content))[0]


class Landmarks(FakeResearcher):
    """Researches each landmark, misbehaving as `behaviour` says for some.

    hang: never answers. transient:N: the first N calls fail to connect.
    reject: the endpoint answers 400. garble: answers prose, never JSON.
    costly: its first turn reports `costly_tokens` tokens. fail: raises a
    non-transient error. Every call is counted per value in `calls`.
    """

    behaviour: dict[str, str] = Field(default_factory=dict)
    costly_tokens: int = 500
    calls: dict[str, int] = Field(default_factory=dict)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        value = the_value(messages)
        self.calls[value] = self.calls.get(value, 0) + 1
        kind, _, arg = self.behaviour.get(value, "").partition(":")
        answering = any(isinstance(m, ToolMessage) for m in messages)
        if kind == "hang":
            await asyncio.sleep(3600)
        if kind == "transient" and self.calls[value] <= int(arg):
            raise openai.APIConnectionError(request=REQUEST)
        if kind == "reject":
            response = httpx.Response(400, request=REQUEST)
            raise openai.BadRequestError(
                "model not found", response=response, body=None
            )
        if kind == "fail":
            raise RuntimeError(f"{value} broke")
        if kind == "garble" and answering:
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage("Lots of things!"))]
            )
        result = await super()._agenerate(messages, stop, run_manager, **kwargs)
        if kind == "costly" and not answering:
            message = result.generations[0].message
            total = self.costly_tokens
            message.usage_metadata = {  # type: ignore[attr-defined]
                "input_tokens": total - 10,
                "output_tokens": 10,
                "total_tokens": total,
            }
        return result
