"""Subagents of one round run at the same time, not one after another."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from langchain_core.language_models import BaseChatModel

from runtime.context import Context
from state.tasks import TaskResult
from tests.support import extractive, research
from tests.unit.fakes import FakeResearcher, scripted
from tests.unit.test_creative_trap import NARROW_PLAN, QUESTION


def overlap(results: list[TaskResult]) -> bool:
    """Whether every task started before any task of the round ended."""
    ends = [r.started_at + timedelta(seconds=r.execution_time_s) for r in results]
    return max(r.started_at for r in results) < min(ends)


def test_extractive_subagents_of_a_round_overlap(freshwiki_kb: str) -> None:
    question = "Which natural disasters struck in 2022 and 2023?"
    state = research(question, extractive(freshwiki_kb, max_rounds=0))
    first_round = [r for r in state["results"].values() if r.round == 0]
    assert len(first_round) == 5
    assert overlap(first_round)


def test_llm_subagents_of_a_round_overlap(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    lead = fake_models(scripted(NARROW_PLAN, {"dimensions": []}, "Summary [1]."))
    slow = fake_models(FakeResearcher(delay=0.2))
    context = Context(
        lead_model=lead, subagent_model=slow, kb_path=creative_kb, max_rounds=0
    )
    state = research(QUESTION, context)
    results = list(state["results"].values())
    assert len(results) == 3
    assert overlap(results)
