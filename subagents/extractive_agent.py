"""Extractive mode: a subagent calls the same tools by fixed rules, no model.

The driver of `subagents.loop` with no model. In its first turn it searches
each value on its own pages for the question; in its second, by the value's
words alone where that found nothing; in its third it reads the passages that
carry most of the question's and the value's words. Its answer points at
their best sentences, which go through the same contract as a model's
(`subagents.contract`): evidence handles and sentence numbers, which code
resolves into quotes. Its calls pass the same gates, within the same budget.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator

from langchain_core.messages import AIMessage, ToolCall, ToolMessage

from runtime.kb import KnowledgeBase
from runtime.text import terms
from state.agents import AgentManifest
from state.tasks import TaskDefinition
from subagents.budget import wrapped_up
from subagents.contract import ClaimedFinding, SubagentAnswer, check_answer
from subagents.evidence import Excerpt, handle_of
from subagents.loop import ANSWER_NOW, Loop, Move, Refusal
from subagents.reading import best_sentences, idf_weights
from subagents.registry import DefinitionError
from subagents.state import AgentState

PASSAGES_READ_PER_VALUE = 3
OPENING_CHARS = 500
"""How much of a passage's opening tells which search hits to read."""
PHASES = ("search", "again", "read")
"""The rule's turns: search each value for the question, search again by its
words alone where that found nothing of its own, read the best hits."""


def call_id(phase: str, value: int, n: int = 0) -> str:
    """The id of the rule's call for `value` (its position) in `phase`."""
    return f"rule:{phase}:{value}:{n}"


def called(state: AgentState) -> Iterator[tuple[str, int, ToolMessage]]:
    """Each answered call of the rule: its phase, its value's position, its answer."""
    for message in state["messages"]:
        if isinstance(message, ToolMessage) and message.tool_call_id.startswith(
            "rule:"
        ):
            _, phase, value, _ = message.tool_call_id.split(":")
            yield phase, int(value), message


def shown(message: ToolMessage) -> list[Excerpt]:
    """The passages a call showed (none when a gate refused it)."""
    return list(message.artifact or [])


class ByRule:
    """Drives the loop by fixed rules: search, search again, read; no model."""

    def __init__(self, manifest: AgentManifest, findings_per_value: int) -> None:
        missing = {"search", "read"} - set(manifest.allowed_tools)
        if missing:
            raise DefinitionError(
                f"extractive mode needs tools {sorted(missing)}, which "
                f"{manifest.agent_id!r} may not use"
            )
        self.findings_per_value = findings_per_value

    def turns(self, manifest: AgentManifest, task: TaskDefinition) -> int:
        """One turn per phase."""
        return len(PHASES)

    async def act(self, state: AgentState, loop: Loop) -> Move:
        """The calls of the next phase that has any to make."""
        done = {phase for phase, _, _ in called(state)}
        for phase in PHASES:
            if phase in done:
                continue
            calls = await asyncio.to_thread(self.calls, phase, state, loop.kb)
            if calls:
                return Move(calls=AIMessage("", tool_calls=calls))
        return ANSWER_NOW

    def calls(self, phase: str, state: AgentState, kb: KnowledgeBase) -> list[ToolCall]:
        """The phase's calls, one per value (three reads per value)."""
        task = state["task"]
        if phase == "search":
            return [
                ToolCall(
                    name="search",
                    args={"query": f"{value} {task.question}", "k": 10},
                    id=call_id(phase, at),
                )
                for at, value in enumerate(task.values)
            ]
        hits = self.hits(state)
        if phase == "again":
            return [
                ToolCall(
                    name="search",
                    args={"query": value, "k": 10, "match_all": True},
                    id=call_id(phase, at),
                )
                for at, value in enumerate(task.values)
                if at in hits and not hits[at]
            ]
        reads = []
        for at, found in hits.items():
            weights = self.weights(kb, task, at)
            for n, hit in enumerate(
                _best_hits(found, weights, PASSAGES_READ_PER_VALUE)
            ):
                evidence = handle_of(hit["passage_id"], state["evidence"])
                reads.append(
                    ToolCall(
                        name="read", args={"handle": evidence}, id=call_id(phase, at, n)
                    )
                )
        return reads

    def hits(self, state: AgentState) -> dict[int, list[Excerpt]]:
        """Each searched value's hits: on its own pages, else by its words alone."""
        values = state["task"].values
        found: dict[int, list[Excerpt]] = {}
        for phase, at, message in called(state):
            if phase == "search":
                found[at] = _about(values[at], shown(message))
            elif phase == "again":
                found[at] = shown(message)
        return found

    def weights(
        self, kb: KnowledgeBase, task: TaskDefinition, at: int
    ) -> dict[str, float]:
        """How much each word of the question and value `at` tells passages apart."""
        return value_weights(kb, task.question, task.values[at])

    def refuse(self, call: ToolCall, state: AgentState) -> Refusal | None:
        """Nothing: every call that passed the gates runs."""
        return None

    async def answer(
        self, state: AgentState, loop: Loop, reason: str | None
    ) -> dict[str, object]:
        """Point at the best sentences read for each value; code checks them."""
        return await asyncio.to_thread(self.answered, state, loop.kb, reason)

    def answered(
        self, state: AgentState, kb: KnowledgeBase, reason: str | None
    ) -> dict[str, object]:
        """The findings the rule points at, checked, and what it left unread."""
        task, evidence = state["task"], state["evidence"]
        read: dict[int, list[tuple[str, list[str]]]] = {}
        for phase, at, message in called(state):
            if phase == "read":
                read.setdefault(at, []).extend(
                    (p["passage_id"], p["sentences"]) for p in shown(message)
                )
        claimed = [
            ClaimedFinding(
                evidence=handle_of(extract.passage_id, evidence),
                sentences=[extract.number],
                values=[at + 1],
                confidence=round(extract.matched, 3),
            )
            for at, passages in sorted(read.items())
            for extract in best_sentences(
                passages, self.weights(kb, task, at), self.findings_per_value
            )
        ]
        answer = SubagentAnswer.model_construct(findings=claimed)
        findings, refused = check_answer(answer, task, evidence, kb)
        errors = refused
        if reason:
            left = ", ".join(v for at, v in enumerate(task.values) if at not in read)
            errors = [*refused, f"{wrapped_up(reason)}; not read: {left or 'none'}"]
        return {
            "findings": findings,
            "errors": errors,
            "steps": len(state["messages"]) - 2,
        }


@functools.lru_cache(maxsize=256)
def value_weights(kb: KnowledgeBase, question: str, value: str) -> dict[str, float]:
    """The words of a question and one of its values, weighted by rarity; read once.

    The rule reads the hits and then the answer by them: one knowledge-base
    lookup serves both.
    """
    return idf_weights(kb, [*terms(question), *terms(value)])


def _about(value: str, hits: list[Excerpt]) -> list[Excerpt]:
    """The hits whose title and section hold every word of `value`."""
    wanted = set(terms(value))
    return [h for h in hits if wanted <= set(terms(f"{h['title']} {h['section']}"))]


def _best_hits(hits: list[Excerpt], weights: dict[str, float], n: int) -> list[Excerpt]:
    """The `n` search hits whose openings carry most query weight."""

    def weight(hit: Excerpt) -> float:
        words = set(terms(" ".join(hit["sentences"])[:OPENING_CHARS]))
        return sum(w for t, w in weights.items() if t in words)

    return sorted(hits, key=lambda h: (-weight(h), h["passage_id"]))[:n]
