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
    """The values a subagent brief asks to cover, in the order it numbers them."""
    if "Value to cover: " in brief:
        return [brief.split("Value to cover: ", 1)[1].split("\n", 1)[0]]
    block = brief.split("(name them by number):\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(". ", 1)[1] for line in block.splitlines()]


_SHOWN = re.compile(r"^(E\d+): |^\[(\d+)\] (.*)$", re.MULTILINE)


def evidence_shown(text: str) -> list[tuple[str, int, str]]:
    """The sentences a tool result shows: (handle, number, sentence), in order."""
    shown, current = [], ""
    for m in _SHOWN.finditer(text):
        if m.group(1):
            current = m.group(1)
        else:
            shown.append((current, int(m.group(2)), m.group(3)))
    return shown


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
    """Searches once per value, then points at the first sentence each search shows.

    `report` replaces the final JSON (to test malformed output); `delay` makes
    the searching turn wait and `report_delay` the final answer; `fail` makes it
    raise. `peak` records how many of its calls
    were ever in flight at once. `search_tool` is the tool it searches with
    ("offered": the first offered tool whose name ends in "search"); `invented`
    adds a finding quoting these words, as if the evidence held them.
    """

    search_tool: str = "search"
    invented: str | None = None
    report: str | None = None
    delay: float = 0.0
    report_delay: float = 0.0
    fail: str | None = None
    in_flight: int = 0
    peak: int = 0

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> AnsweringModel:
        if self.search_tool != "offered":
            return self
        names = [t.name for t in tools if t.name.endswith("search")]
        return self.model_copy(update={"search_tool": names[0]})

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
                    {"name": self.search_tool, "args": self.query(v), "id": f"call_{i}"}
                    for i, v in enumerate(values)
                ],
            )
        if self.report is not None:
            return AIMessage(self.report, usage_metadata=USAGE)
        findings = []
        for number, (value, result) in enumerate(zip(values, results, strict=False)):
            shown = evidence_shown(str(result.content))
            if not shown:
                continue
            handle, sentence_number, sentence = shown[0]
            findings.append(
                {
                    "evidence": handle,
                    "sentences": [sentence_number],
                    "claim": f"{value}: {sentence}",
                    "values": [number + 1],
                    "confidence": 0.9,
                }
            )
        if self.invented and findings:
            findings.append({**findings[0], "sentences": [], "quote": self.invented})
        return AIMessage(json.dumps({"findings": findings}), usage_metadata=USAGE)

    def query(self, value: str) -> dict[str, Any]:
        """The arguments of its search for `value`."""
        if self.search_tool == "search":
            return {"query": value, "k": 3}
        return {"query": value}
