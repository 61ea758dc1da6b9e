"""Circuit breakers: failures in a row open an agent; its tasks go to a fallback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graphs.research import builder
from runtime.context import Context
from state.circuit import Breaker, breakers_after
from state.tasks import TaskDefinition, TaskResult
from tests.unit.fakes import scripted
from tests.unit.landmarks import NOTHING_MORE, QUESTION, Landmarks

FOUR = ("harbour", "glacier", "orchard", "lighthouse")
PLAN: dict[str, Any] = {
    "direct_answer": False,
    "dimensions": [{"name": "landmark", "values": list(FOUR)}],
    "facets": [
        {"id": f"f{i}", "title": v.title(), "brief": f"The {v}.", "values": [v]}
        for i, v in enumerate(FOUR)
    ],
}
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def ended(agent: str, failed: bool, second: int, round_no: int = 0) -> TaskResult:
    task = TaskDefinition(
        task_id=f"t{second}",
        run_id="t",
        agent_id=agent,
        facet_id=f"f{second}",
        question="q",
        brief="b",
        values=("v",),
        acceptance="a",
        round=round_no,
    )
    return TaskResult.of(
        task,
        findings=[],
        errors=["broke"] if failed else [],
        started_at=T0 + timedelta(seconds=second),
        seconds=0.5,
        failure="error" if failed else None,
    )


def test_the_breaker_opens_at_its_threshold_and_a_success_closes_it() -> None:
    two = [ended("a", True, 0), ended("a", True, 1)]
    assert breakers_after(two, threshold=3) == {"a": Breaker(failures=2)}
    three = [*two, ended("a", True, 2)]
    assert breakers_after(three, threshold=3)["a"].open
    assert breakers_after([*three, ended("a", False, 3)], threshold=3) == {
        "a": Breaker()
    }
    # another agent's results neither open nor close it
    assert breakers_after([*three, ended("b", False, 3)], threshold=3)["a"].open


def test_failures_count_in_the_order_tasks_ended() -> None:
    # the success ended last, so it closes the circuit after the failures
    late_success = [ended("a", True, 0), ended("a", False, 5), ended("a", True, 1)]
    assert breakers_after(late_success, threshold=2) == {"a": Breaker()}


def test_an_open_agent_s_tasks_go_to_its_fallback_and_a_resume_keeps_it_open(
    fake_models: Callable[[BaseChatModel], str], landmarks_kb: str, tmp_path: Path
) -> None:
    researcher = Landmarks(behaviour=dict.fromkeys(FOUR, "fail"))
    lead = scripted(PLAN, NOTHING_MORE, NOTHING_MORE, "Eastport [1].")
    context = Context(
        lead_model=fake_models(lead),
        subagent_model=fake_models(researcher),
        kb_path=landmarks_kb,
        max_rounds=1,
        max_subagents=8,
        breaker_threshold=3,
        on_escalation="skip",
    )
    config: RunnableConfig = {"configurable": {"thread_id": "breaker"}}
    db = str(tmp_path / "runs.sqlite")

    async def until_aggregated() -> dict[str, Any]:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            app = builder.compile(checkpointer=saver, interrupt_after=["aggregate"])
            await app.ainvoke({"question": QUESTION}, config, context=context)
            return dict((await app.aget_state(config)).values)

    async def resumed() -> dict[str, Any]:
        async with AsyncSqliteSaver.from_conn_string(db) as saver:
            app = builder.compile(checkpointer=saver)
            await app.ainvoke(None, config, context=context)
            return dict((await app.aget_state(config)).values)

    paused = asyncio.run(until_aggregated())
    assert paused["breakers"]["researcher"] == Breaker(failures=4, open=True)
    state = asyncio.run(resumed())  # a new process would see the same
    assert state["breakers"]["researcher"].open
    second = [r for r in state["results"].values() if r.round == 1]
    assert second and {r.agent_id for r in second} == {"extractor"}
    assert all(r.status == "success" for r in second)
    assert set(researcher.calls) == set(FOUR)  # the open agent got no new task
    assert sum(researcher.calls.values()) == len(FOUR)
    assert not state["report"].unresolved_gaps
    assert state["report"].summary.open_circuits == ("researcher",)
