"""Fake chat models with a fixed latency per call, and the corpus they quote."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from roles.enumerate import ENUMERATE_PROMPT
from tests.unit.fakes import AnsweringModel, values_in_brief

LATENCY_S = 0.2
"""How long every fake model call takes."""
USAGE = {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}
_ONSETS = "b d f g k l m n p r s t v z br dr gr kr pr tr".split()
_VOWELS = "a e i o u".split()


def value_names(n: int) -> list[str]:
    """`n` distinct made-up place names, one word each ("Babalo", "Bebalo" ...)."""
    syllables = [o + v for o in _ONSETS for v in _VOWELS]
    count = len(syllables)
    if n > count * count:
        raise ValueError(f"at most {count * count} names")
    return [
        (syllables[i % count] + syllables[i // count] + "lo").capitalize()
        for i in range(n)
    ]


def passage_text(value: str) -> str:
    """The one paragraph the knowledge base holds about `value`."""
    return (
        f"{value} is a fishing settlement on the northern coast of the archipelago. "
        f"The harbour of {value} ships salt, timber and dried fish to the mainland."
    )


def quote_of(value: str) -> str:
    """The sentence a fake subagent quotes for `value`: the passage's first."""
    return passage_text(value).split(". ", 1)[0] + "."


def write_corpus(folder: Path, values: Sequence[str]) -> None:
    """One Markdown document per value, titled with it, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for value in values:
        text = f"# {value}\n\n{passage_text(value)}\n"
        (folder / f"{value}.md").write_text(text, encoding="utf-8")


class SlowModel(AnsweringModel):
    """A chat model whose every call sleeps `latency` seconds, counting calls."""

    latency: float = LATENCY_S
    calls: int = 0

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        await asyncio.sleep(self.latency)
        return ChatResult(generations=[ChatGeneration(message=self.answer(messages))])


class DelegatorSubagent(SlowModel):
    """A delegator subagent that answers its brief in one call.

    It quotes the first sentence of its value's passage verbatim, as a JSON
    final answer with one finding.
    """

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """One finding per value of the brief."""
        brief = next(m for m in messages if isinstance(m, HumanMessage))
        findings = [
            {
                "claim": quote_of(value),
                "quote": quote_of(value),
                "passage_id": f"{value}#0",
                "values": [value],
                "confidence": 0.9,
            }
            for value in values_in_brief(str(brief.content))
        ]
        return AIMessage(json.dumps({"findings": findings}), usage_metadata=USAGE)


class DelegatorLead(SlowModel):
    """delegator's lead after the plan: finds nothing more, then writes.

    It tells its two tasks apart by their system prompts: the breadth check
    (gap_check's enumeration) and the report's opening, which cites source 1.
    """

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """An empty enumeration, or a one-sentence opening."""
        if str(messages[0].content).startswith(ENUMERATE_PROMPT[:40]):
            return AIMessage(json.dumps({"dimensions": []}), usage_metadata=USAGE)
        return AIMessage(
            "The sources describe each settlement [1].", usage_metadata=USAGE
        )


class Coordinator(SlowModel):
    """A deepagents main agent: one `task` call per value, then a final text."""

    values: list[str]
    subagent_type: str = "researcher"

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """Delegate every value at once; once the results are in, conclude."""
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if results:
            return AIMessage(
                f"Collected {len(results)} subagent reports.", usage_metadata=USAGE
            )
        calls = [
            {
                "name": "task",
                "args": {
                    "description": f"Find what the sources say about {value}.",
                    "subagent_type": self.subagent_type,
                },
                "id": f"call_{i}",
                "type": "tool_call",
            }
            for i, value in enumerate(self.values)
        ]
        return AIMessage("", tool_calls=calls, usage_metadata=USAGE)


class Researcher(SlowModel):
    """A deepagents subagent that answers its task in one call."""

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """A one-line report on the value the task names."""
        task = next(m for m in messages if isinstance(m, HumanMessage))
        value = str(task.content).removeprefix("Find what the sources say about ")
        return AIMessage(f"Report: {quote_of(value.rstrip('.'))}", usage_metadata=USAGE)
