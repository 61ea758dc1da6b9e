"""gap_check: when re-delegation stops, what it re-sends, and the probe."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from nodes.gap_check import gap_check
from roles.delegation import MAX_ATTEMPTS_PER_VALUE, next_tasks
from roles.enumerate import probe
from roles.render import why_uncovered
from runtime.kb import KnowledgeBase
from state.coverage import RoundCoverage
from state.findings import Finding
from state.graph import ResearchState
from state.plan import CoveragePlan, Dimension, Facet, facets_for_values
from state.tasks import TaskDefinition, TaskResult
from subagents.contract import brief
from subagents.registry import load_registry
from subagents.routing import Router
from subagents.tools import make_tools
from tests.support import extractive, run_node

QUESTION = "What is the impact of AI on creative industries?"
TITLES = (
    "AI in film",
    "AI in graphic design",
    "AI in music",
    "AI in photography",
    "AI in visual art",
    "AI in writing",
    "Sourdough baking",
)


def plan_of(*values: str) -> CoveragePlan:
    return CoveragePlan(
        question=QUESTION,
        dimensions=(Dimension(name="medium", values=values),),
        facets=facets_for_values(QUESTION, values),
    )


def result(task: TaskDefinition, *errors: str) -> TaskResult:
    return TaskResult.of(
        task,
        findings=[],
        errors=errors,
        started_at=datetime.now(UTC),
        seconds=0.1,
    )


def task_for(plan: CoveragePlan, value: str, round_no: int) -> TaskDefinition:
    facet = plan.owners()[value]
    return TaskDefinition.for_facet(
        facet, question=QUESTION, run_id="t", round_no=round_no, timeout_s=5
    )


def after_an_empty_first_round(*sent: str) -> ResearchState:
    """Round 1 of a plan of every title; round 0 sent `sent` and found nothing."""
    plan = plan_of(*TITLES)
    before = RoundCoverage.measure(
        plan.values, [], need=1, round_no=0, new_values=(), previous=None
    )
    tasks = [task_for(plan, v, 0) for v in sent]
    return {
        "plan": plan,
        "round": 1,
        "run_id": "t",
        "findings": [],
        "results": {t.task_id: result(t) for t in tasks},
        "coverage": [before],
    }


def test_a_round_that_adds_nothing_ends_the_delegation(creative_kb: str) -> None:
    # Every document is named by a value, so the probe finds nothing new, and
    # no finding arrived: the second round gained nothing over the first.
    state = after_an_empty_first_round(*TITLES)
    context = extractive(creative_kb, max_rounds=3)
    update = run_node(gap_check, state, context)
    (after,) = update["coverage"]
    assert after.uncovered == TITLES
    assert not after.improved
    assert after.stopped == "the last round added no verified finding"
    assert update["pending"] == []
    assert "round" not in update


def test_a_round_that_adds_nothing_goes_on_for_values_never_sent(
    creative_kb: str,
) -> None:
    # Two values were sent and came back empty; the others were never sent
    # (the round's task cap): a round without gain does not leave them unasked.
    state = after_an_empty_first_round(*TITLES[:2])
    context = extractive(creative_kb, max_rounds=3, max_subagents=7)
    update = run_node(gap_check, state, context)
    (after,) = update["coverage"]
    assert not after.improved
    assert after.stopped is None
    # Values never sent and values sent before take turns.
    order = [2, 0, 3, 1, 4, 5, 6]
    assert [t.values for t in update["pending"]] == [(TITLES[i],) for i in order]


def test_the_first_round_of_gaps_is_redelegated(creative_kb: str) -> None:
    plan = plan_of(*TITLES)
    state: ResearchState = {
        "plan": plan,
        "round": 0,
        "run_id": "t",
        "findings": [],
        "results": {},
        "coverage": [],
    }
    context = extractive(creative_kb, max_rounds=3, max_subagents=7)
    update = run_node(gap_check, state, context)
    assert [t.values for t in update["pending"]] == [(v,) for v in TITLES]
    assert {t.round for t in update["pending"]} == {1}
    assert update["round"] == 1


def test_next_tasks_group_by_facet_skip_values_tried_too_often(
    creative_kb: str,
) -> None:
    plan = plan_of("music", "film", "writing").extended("era", ["1990s", "2020s"])
    tried = [task_for(plan, "music", n) for n in range(MAX_ATTEMPTS_PER_VALUE)]
    tasks, blocked = next_tasks(
        plan,
        [result(t) for t in tried],
        [],
        ("music", "film", "writing", "1990s"),
        run_id="t",
        round_no=2,
        ctx=extractive(creative_kb, max_subagents=2),
        router=Router(load_registry(), {}, "capability"),
        remaining_s=5,
    )
    assert blocked == {}
    assert [t.values for t in tasks] == [("film",), ("writing",)]
    assert all(t.round == 2 and t.task_id != tried[0].task_id for t in tasks)


def test_a_value_sent_once_takes_turns_with_values_never_sent(
    creative_kb: str,
) -> None:
    # Two tasks a round: "music" failed once; before the film and writing
    # values (added later, never sent) it would wait until they were all sent.
    plan = plan_of("music", "film", "writing")
    tasks, _ = next_tasks(
        plan,
        [result(task_for(plan, "music", 0), "no finding")],
        [],
        ("music", "film", "writing"),
        run_id="t",
        round_no=1,
        ctx=extractive(creative_kb, max_subagents=2),
        router=Router(load_registry(), {}, "capability"),
        remaining_s=5,
    )
    assert [t.values for t in tasks] == [("film",), ("music",)]


def test_values_sent_together_and_left_uncovered_go_out_one_a_task(
    creative_kb: str,
) -> None:
    # One facet owns music and film; its task brought nothing for either.
    # Sent again together, its agent could read for one of them only again.
    both = Facet(
        id="f0",
        title="Sound and screen",
        brief="AI in music and film",
        values=("music", "film"),
    )
    plan = CoveragePlan(
        question=QUESTION,
        dimensions=(Dimension(name="medium", values=("music", "film", "writing")),),
        facets=(both, *facets_for_values(QUESTION, ["writing"], ["f0"])),
    )
    first = TaskDefinition.for_facet(both, question=QUESTION, run_id="t", round_no=0)
    tasks, _ = next_tasks(
        plan,
        [result(first, "no finding")],
        [],
        ("music", "film", "writing"),
        run_id="t",
        round_no=1,
        ctx=extractive(creative_kb),
        router=Router(load_registry(), {}, "capability"),
        remaining_s=5,
    )
    assert [(t.facet_id, t.values) for t in tasks] == [
        (plan.owners()["writing"].id, ("writing",)),
        ("f0", ("music",)),
        ("f0", ("film",)),
    ]
    assert len({t.task_id for t in tasks}) == 3


def test_probe_finds_relevant_documents_nothing_cites_or_names(
    creative_kb: str,
) -> None:
    kb = KnowledgeBase(creative_kb)
    found = probe(kb, QUESTION, known={"AI_in_music"}, names=["AI in film"])
    titles = [d.title for d in found]
    assert set(titles) == {
        "AI in visual art",
        "AI in photography",
        "AI in graphic design",
        "AI in writing",
    }
    assert "Sourdough baking" not in titles


def test_why_uncovered_names_the_reason() -> None:
    plan = plan_of("music", "film")
    music = task_for(plan, "music", 0)
    results = [result(music, "timed out after 5s"), result(task_for(plan, "film", 0))]
    assert why_uncovered("music", results) == (
        "no verified finding after 1 task(s); last error: timed out after 5s"
    )
    assert why_uncovered("film", results) == "no verified finding after 1 task(s)"
    assert why_uncovered("games", results) == "not delegated"
    stopped = "the last round added no verified finding"
    assert why_uncovered("games", results, stopped=stopped) == (
        "not delegated: the last round added no verified finding"
    )
    assert why_uncovered("film", results, stopped=stopped) == (
        "no verified finding after 1 task(s)"
    )


def test_no_task_goes_out_after_the_run_deadline(creative_kb: str) -> None:
    state: ResearchState = {
        "plan": plan_of(*TITLES),
        "round": 0,
        "run_id": "t",
        "started_at": time.time() - 10,
        "findings": [],
        "results": {},
        "coverage": [],
    }
    context = extractive(creative_kb, run_timeout_s=5)
    update = run_node(gap_check, state, context)
    assert update["pending"] == []
    assert update["coverage"][0].stopped == "the run's deadline passed"


def test_a_redelegated_task_carries_what_is_known(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    plan = plan_of("music", "film")
    passage = kb.search("AI music composition", 1)[0]
    cited = Finding(
        claim=passage.text[:80],
        quote=passage.text[:80],
        source=passage.source(),
        facet_ids=("f0",),
        values=("music",),
        verified=True,
    )
    failed = result(task_for(plan, "film", 0), "timed out after 5s")
    failed = failed.model_copy(update={"status": "failed"})
    (task,), _ = next_tasks(
        plan,
        [failed],
        [cited],
        ("film",),
        run_id="t",
        round_no=1,
        ctx=extractive(creative_kb),
        router=Router(load_registry(), {}, "capability"),
        remaining_s=5,
    )
    assert task.cited == (cited.source,)
    assert task.earlier == ("film: the last task failed (timed out after 5s)",)
    text = brief(task)
    assert f"- {passage.title}, {passage.section}" in text
    assert "film: the last task failed (timed out after 5s)" in text
    search = make_tools(kb)["search"]
    args = {"query": "AI music composition", "task": task}
    shown = search.invoke(
        {"type": "tool_call", "id": "c", "name": "search", "args": args}
    )
    assert shown.artifact  # the search found passages, but not the one cited
    assert passage.passage_id not in {e["passage_id"] for e in shown.artifact}
