"""Fake chat models that drive the LLM code path offline and deterministically."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

USAGE = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
"""What every fake answer reports using."""
FAIL = "!fail: "
"""A scripted answer starting with this raises instead, with the rest as reason."""


class Scripted(GenericFakeChatModel):
    """Gives its answers in order; an answer starting with FAIL raises."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        content = str(result.generations[0].message.content)
        if content.startswith(FAIL):
            raise RuntimeError(content.removeprefix(FAIL))
        return result


def scripted(*answers: str | dict[str, Any]) -> Scripted:
    """A model that gives these answers in order (dicts are sent as JSON)."""
    return Scripted(
        messages=iter(
            AIMessage(a if isinstance(a, str) else json.dumps(a), usage_metadata=USAGE)
            for a in answers
        )
    )


def values_in_brief(brief: str) -> list[str]:
    """The values a subagent brief lists under 'Values to cover:'."""
    block = brief.split("Values to cover:\n", 1)[1].split("\n\n", 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


class AnsweringModel(BaseChatModel):
    """A chat model whose replies come from `answer`; it takes tools as they are.

    Its replies are scripted, so binding tools changes nothing.
    """

    @property
    def _llm_type(self) -> str:
        return type(self).__name__

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> AnsweringModel:
        return self

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """The reply to `messages`."""
        raise NotImplementedError

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.answer(messages))])


class FakeResearcher(AnsweringModel):
    """Searches once per value, then quotes the first sentence of each top hit.

    `report` replaces the final JSON (to test malformed output); `delay` makes
    the searching turn wait and `report_delay` the final answer; `fail` makes it
    raise. `peak` records how many of its calls
    were ever in flight at once.
    """

    report: str | None = None
    delay: float = 0.0
    report_delay: float = 0.0
    fail: str | None = None
    in_flight: int = 0
    peak: int = 0

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            answering = any(isinstance(m, ToolMessage) for m in messages)
            await asyncio.sleep(self.report_delay if answering else self.delay)
            return self._generate(messages, stop, None, **kwargs)
        finally:
            self.in_flight -= 1

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """Search each value, then quote each top hit's first sentence."""
        if self.fail:
            raise RuntimeError(self.fail)
        brief = next(m for m in messages if isinstance(m, HumanMessage))
        values = values_in_brief(str(brief.content))
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            return AIMessage(
                "",
                usage_metadata=USAGE,
                tool_calls=[
                    {"name": "search", "args": {"query": v, "k": 3}, "id": f"call_{i}"}
                    for i, v in enumerate(values)
                ],
            )
        if self.report is not None:
            return AIMessage(self.report, usage_metadata=USAGE)
        findings = []
        for value, result in zip(values, results, strict=False):
            hits = json.loads(str(result.content))
            if not hits:
                continue
            sentence = re.split(r"(?<=[.!?])\s+", hits[0]["text"])[0]
            findings.append(
                {
                    "claim": f"{value}: {sentence}",
                    "quote": sentence,
                    "passage_id": hits[0]["passage_id"],
                    "values": [value],
                    "confidence": 0.9,
                }
            )
        return AIMessage(json.dumps({"findings": findings}), usage_metadata=USAGE)
