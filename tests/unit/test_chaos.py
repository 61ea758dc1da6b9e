"""Chaos: one failing or hanging subagent costs only its own branch."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from runtime.context import Context
from state.tasks import TaskResult
from tests.support import research
from tests.unit.fakes import USAGE, scripted
from tests.unit.landmarks import LANDMARKS, NOTHING_MORE, PLAN, QUESTION, Landmarks

CHAOS = {
    "harbour": "hang",
    "glacier": "transient:2",
    "orchard": "reject",
    "lighthouse": "garble",
    "vineyard": "costly",
}
LOST = {"harbour", "orchard", "lighthouse"}


@pytest.fixture(scope="module")
def chaos(
    landmarks_kb: str,
) -> tuple[dict[str, Any], Landmarks]:
    models: dict[str, BaseChatModel] = {}
    from runtime.models import _PROVIDERS, register_provider

    register_provider("chaos", lambda name, settings: models[name])
    researcher = Landmarks(behaviour=CHAOS)
    models["lead"] = scripted(PLAN, NOTHING_MORE, "Eastport has landmarks [1].")
    models["researcher"] = researcher
    context = Context(
        lead_model="chaos:lead",
        subagent_model="chaos:researcher",
        kb_path=landmarks_kb,
        max_subagents=8,
        max_parallel=8,
        max_rounds=0,
        task_timeout_s=3.0,  # a healthy task on a loaded machine finishes well within
        retry_backoff_s=0.05,
        task_token_budget=100,
        breaker_threshold=99,
    )
    try:
        return research(QUESTION, context), researcher
    finally:
        del _PROVIDERS["chaos"]


def by_value(state: dict[str, Any]) -> dict[str, TaskResult]:
    return {r.values[0]: r for r in state["results"].values()}


def test_the_run_completes_with_every_branch_accounted_for(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, _ = chaos
    results = by_value(state)
    assert set(results) == set(LANDMARKS)
    assert state["report"] is not None
    healthy = set(LANDMARKS) - set(CHAOS)
    assert all(results[v].status == "success" for v in healthy)
    assert all(results[v].attempts == 1 for v in healthy)


def test_a_hanging_subagent_times_out_each_attempt(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, researcher = chaos
    hung = by_value(state)["harbour"]
    assert (hung.status, hung.failure, hung.attempts) == ("failed", "timeout", 3)
    assert hung.errors == ("timed out after 3s",)
    assert researcher.calls["harbour"] == 3


def test_transient_errors_are_retried_until_the_third_attempt_succeeds(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, researcher = chaos
    retried = by_value(state)["glacier"]
    assert (retried.status, retried.attempts) == ("success", 3)
    assert researcher.calls["glacier"] == 4  # two failed calls, then two turns
    retries = [e.fields for e in state["events"] if e.kind == "RETRY"]
    glacier = [f for f in retries if f["task_id"] == retried.task_id]
    assert [f["attempt"] for f in glacier] == [2, 3]


def test_a_non_recoverable_error_fails_at_once(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, researcher = chaos
    rejected = by_value(state)["orchard"]
    assert (rejected.status, rejected.failure, rejected.attempts) == (
        "failed",
        "rejected",
        1,
    )
    assert "model not found" in rejected.errors[0]
    assert researcher.calls["orchard"] == 1


def test_malformed_output_fails_without_retries(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, _ = chaos
    garbled = by_value(state)["lighthouse"]
    assert (garbled.status, garbled.failure, garbled.attempts) == (
        "failed",
        "invalid output",
        1,
    )


def test_a_subagent_over_its_token_budget_wraps_up_and_keeps_its_findings(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, _ = chaos
    costly = by_value(state)["vineyard"]
    assert costly.status == "partial"
    assert costly.findings
    assert costly.tokens == 500 + USAGE["total_tokens"]  # its turn, then its answer
    assert any(
        e.startswith("wrapped up early: its token budget") for e in costly.errors
    )
    verified = [f for f in state["findings"] if "vineyard" in f.values]
    assert verified


def test_coverage_reflects_exactly_the_lost_facets(
    chaos: tuple[dict[str, Any], Landmarks],
) -> None:
    state, _ = chaos
    (coverage,) = state["coverage"]
    assert set(coverage.uncovered) == LOST
    assert set(coverage.covered) == set(LANDMARKS) - LOST
    report = state["report"]
    assert set(report.unresolved_gaps) == LOST
    failed = report.markdown.split("## Failed tasks", 1)[1].split("\n## ", 1)[0]
    for value in LOST:
        assert f"| {value} |" in failed
    assert report.summary.retries == 4 and report.summary.failures == 3
