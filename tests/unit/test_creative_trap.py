"""The breadth trap on the LLM path: a narrow first plan, caught and repaired."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from blockbuster import blockbuster_ctx
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from runtime.context import Context
from tests.support import research
from tests.unit.fakes import USAGE, FakeResearcher, scripted

QUESTION = "What is the impact of AI on creative industries?"
FIRST = ["visual art", "graphic design", "photography"]
MISSED = ["music", "writing", "film"]
NARROW_PLAN: dict[str, Any] = {
    "direct_answer": False,
    "dimensions": [{"name": "medium", "values": FIRST}],
    "facets": [
        {
            "id": f"f{i}",
            "title": v.title(),
            "brief": f"How AI changes {v}.",
            "values": [v],
        }
        for i, v in enumerate(FIRST)
    ],
}
ENUMERATION = {"dimensions": [{"name": "medium", "values": MISSED}]}
NOTHING_MORE: dict[str, Any] = {"dimensions": []}
SUPPORTED = (
    "Illustrators argue image generators were trained on their portfolios without "
    "consent [1][2], and music generators compose full songs [4]; see also"
)
SYNTHESIS = f"{SUPPORTED} [99]. AI now touches every medium [1]."


def walk(value: Any) -> list[Any]:
    """Every object reachable from a state value, models and containers opened."""
    found = [value]
    if isinstance(value, BaseModel):
        value = dict(value)
    if isinstance(value, dict):
        for v in value.values():
            found += walk(v)
    elif isinstance(value, list | tuple):
        for v in value:
            found += walk(v)
    return found


@pytest.fixture
def run(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> dict[str, Any]:
    lead = fake_models(scripted(NARROW_PLAN, ENUMERATION, NOTHING_MORE, SYNTHESIS))
    researcher = fake_models(FakeResearcher())
    context = Context(lead_model=lead, subagent_model=researcher, kb_path=creative_kb)
    return research(QUESTION, context)


def test_enumerator_names_what_the_plan_missed(run: dict[str, Any]) -> None:
    first_round = run["coverage"][0]
    assert first_round.covered == tuple(FIRST)
    assert first_round.new_values == tuple(MISSED)


def test_gap_check_redelegates_exactly_the_missing_values(run: dict[str, Any]) -> None:
    by_round: dict[int, list[str]] = {}
    for result in run["results"].values():
        by_round.setdefault(result.round, []).extend(result.values)
    assert sorted(by_round[0]) == sorted(FIRST)
    assert sorted(by_round[1]) == sorted(MISSED)
    assert set(by_round) == {0, 1}


def test_final_report_covers_all_six(run: dict[str, Any]) -> None:
    report = run["report"]
    statuses = {row.value: row.status for row in report.coverage_table}
    assert statuses == {v: "covered" for v in FIRST + MISSED}
    assert report.unresolved_gaps == ()
    assert "## Not covered" not in report.markdown
    for value in FIRST + MISSED:
        assert any(value in f.values and f.verified for f in run["findings"])


def test_no_subagent_message_reaches_the_coordinator(run: dict[str, Any]) -> None:
    assert "messages" not in run
    assert not [v for v in walk(run) if isinstance(v, BaseMessage)]
    assert all(r.steps >= 3 for r in run["results"].values())  # they did use tools


def test_lead_synthesis_keeps_only_what_existing_citations_support(
    run: dict[str, Any],
) -> None:
    report = run["report"]
    assert "## Summary" in report.markdown
    assert f"{SUPPORTED}." in report.markdown
    assert "[99]" not in report.markdown
    assert "every medium" not in report.markdown
    assert report.summary.citations_dropped == 1
    assert report.summary.sentences_unsupported == 1
    assert len(report.citations) == 6


def test_tokens_of_every_role_are_counted(run: dict[str, Any]) -> None:
    summary = run["report"].summary
    # the lead: plan, two enumerations, the synthesis
    assert summary.tokens_by_role["lead"] == 4 * USAGE["total_tokens"]
    subagent_tokens = sum(r.tokens for r in run["results"].values())
    assert subagent_tokens == 6 * 2 * USAGE["total_tokens"]  # 6 tasks x 2 turns
    assert summary.tokens_by_role["subagents"] == subagent_tokens
    assert summary.tokens == summary.tokens_by_role["lead"] + subagent_tokens


def test_parent_context_is_less_than_all_in_one(run: dict[str, Any]) -> None:
    summary = run["report"].summary
    tasks = list(run["results"].values())
    assert all(r.context_tokens == USAGE["input_tokens"] for r in tasks)
    assert summary.parent_context_tokens == USAGE["input_tokens"]
    assert summary.all_in_one_context_tokens == (1 + len(tasks)) * USAGE["input_tokens"]


def test_llm_path_makes_no_blocking_call_on_the_event_loop(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    lead = fake_models(scripted(NARROW_PLAN, ENUMERATION, NOTHING_MORE, SYNTHESIS))
    researcher = fake_models(FakeResearcher())
    context = Context(lead_model=lead, subagent_model=researcher, kb_path=creative_kb)
    with blockbuster_ctx():
        state = research(QUESTION, context)
    assert {r.status for r in state["results"].values()} == {"success"}
