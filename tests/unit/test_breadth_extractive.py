"""Extractive mode on the breadth dev cases, with and without re-delegation."""

from __future__ import annotations

import asyncio

import pytest

from evals.breadth import BreadthCase, CaseResult, load_cases, run_case
from tests.support import extractive

CASES = {case.id: case for case in load_cases()}


def run(case: BreadthCase, kb: str, max_rounds: int) -> CaseResult:
    return asyncio.run(run_case(case, extractive(kb, max_rounds=max_rounds)))


def test_disasters_every_group_cited_with_redelegation(freshwiki_kb: str) -> None:
    result = run(CASES["disasters-2022-2023"], freshwiki_kb, max_rounds=3)
    assert result.missing_groups == ()
    assert set(result.covered_groups) == set(CASES["disasters-2022-2023"].groups)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_redelegation_never_loses_groups(case_id: str, freshwiki_kb: str) -> None:
    without = run(CASES[case_id], freshwiki_kb, max_rounds=0)
    with_rounds = run(CASES[case_id], freshwiki_kb, max_rounds=3)
    assert set(without.covered_groups) <= set(with_rounds.covered_groups)
    assert without.tasks < with_rounds.tasks


def test_redelegation_raises_coverage_on_some_case(freshwiki_kb: str) -> None:
    gains = []
    for case in CASES.values():
        without = run(case, freshwiki_kb, max_rounds=0)
        with_rounds = run(case, freshwiki_kb, max_rounds=3)
        gains.append(with_rounds.group_recall - without.group_recall)
    assert max(gains) > 0


def test_extractive_runs_are_deterministic(freshwiki_kb: str) -> None:
    case = CASES["sport-2022-2023"]
    first, second = (run(case, freshwiki_kb, max_rounds=2) for _ in range(2))
    assert first.covered_groups == second.covered_groups
    assert first.plan_coverage == second.plan_coverage
    assert first.tasks == second.tasks
