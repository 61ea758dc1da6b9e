"""Subagents of one round run at the same time, not one after another."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from runtime.context import Context
from runtime.kb import KnowledgeBase
from runtime.models import (
    REMOTE_PARALLEL,
    RULE_PARALLEL,
    ModelSettings,
    parallel_limit,
)
from state.tasks import TaskResult
from tests.support import extractive, research
from tests.unit.fakes import FakeResearcher, scripted
from tests.unit.test_creative_trap import NARROW_PLAN, QUESTION


def overlap(results: list[TaskResult]) -> bool:
    """Whether every task started before any task of the round ended."""
    ends = [r.started_at + timedelta(seconds=r.execution_time_s) for r in results]
    return max(r.started_at for r in results) < min(ends)


def test_extractive_subagents_of_a_round_overlap(
    freshwiki_kb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    searches = {"in_flight": 0, "peak": 0}
    real_search = KnowledgeBase.search

    def watched_search(self: KnowledgeBase, *args: Any, **kwargs: Any) -> Any:
        searches["in_flight"] += 1
        searches["peak"] = max(searches["peak"], searches["in_flight"])
        try:
            time.sleep(0.05)  # widen the window in which another task can enter
            return real_search(self, *args, **kwargs)
        finally:
            searches["in_flight"] -= 1

    monkeypatch.setattr(KnowledgeBase, "search", watched_search)
    question = "Which natural disasters struck in 2022 and 2023?"
    state = research(question, extractive(freshwiki_kb, max_rounds=0, max_parallel=5))
    first_round = [r for r in state["results"].values() if r.round == 0]
    assert len(first_round) == 5
    assert searches["peak"] >= 2
    assert overlap(first_round)


def slow_narrow_run(
    fake_models: Callable[[BaseChatModel], str], kb: str, **settings: Any
) -> tuple[list[TaskResult], FakeResearcher]:
    """The narrow creative plan once, its subagents' first turn taking 1 s.

    Long enough that on a loaded machine the three still start before the
    first one's turn ends, when nothing holds them back.
    """
    lead = fake_models(scripted(NARROW_PLAN, {"dimensions": []}, "Summary [1]."))
    slow = FakeResearcher(delay=1.0)
    context = Context(
        lead_model=lead,
        subagent_model=fake_models(slow),
        kb_path=kb,
        max_rounds=0,
        **settings,
    )
    return list(research(QUESTION, context)["results"].values()), slow


def test_llm_subagents_of_a_round_overlap(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    results, slow = slow_narrow_run(fake_models, creative_kb)
    assert len(results) == 3
    assert slow.peak == 3
    assert overlap(results)


def test_max_parallel_in_the_context_caps_a_run(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    results, slow = slow_narrow_run(fake_models, creative_kb, max_parallel=2)
    assert len(results) == 3
    assert slow.peak == 2


def test_the_default_parallel_cap_comes_from_the_endpoint() -> None:
    remote = ModelSettings.for_role("subagent", "openai:gpt-4o-mini")
    by_rule = ModelSettings.for_role("subagent", "extractive")
    assert parallel_limit(remote) == REMOTE_PARALLEL
    assert parallel_limit(by_rule) == RULE_PARALLEL
    assert parallel_limit(remote, asked=3) == 3  # what the context asks stands
