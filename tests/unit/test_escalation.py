"""Escalation scoped to one branch: it waits for a person, its siblings finish."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import graphs.subagent as subagent_graph
from cli.runs import ForkFrom, RunRequest, forked_input
from graphs.research import builder
from runtime.context import Context
from state.handoff import HandoffSummary
from tests.unit.fakes import scripted
from tests.unit.landmarks import NOTHING_MORE, QUESTION, Landmarks, the_value

FOUR = ("harbour", "glacier", "orchard", "lighthouse")
PLAN: dict[str, Any] = {
    "direct_answer": False,
    "dimensions": [{"name": "landmark", "values": list(FOUR)}],
    "facets": [
        {"id": f"f{i}", "title": v.title(), "brief": f"The {v}.", "values": [v]}
        for i, v in enumerate(FOUR)
    ],
}


class Recording(Landmarks):
    """Landmarks that also keeps the briefs it was given, per value."""

    briefs: dict[str, list[str]] = {}

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Any:
        self.briefs.setdefault(the_value(messages), []).append(str(messages[1].content))
        return await super()._agenerate(messages, *args, **kwargs)


class Run:
    """A research run on a checkpointed thread, driven step by step."""

    def __init__(self, fake_models: Callable[[BaseChatModel], str], kb: str) -> None:
        self.researcher = Recording(behaviour={"orchard": "fail"}, briefs={})
        lead = scripted(PLAN, NOTHING_MORE, "Eastport [1].", NOTHING_MORE, "E [1].")
        self.context = Context(
            lead_model=fake_models(lead),
            subagent_model=fake_models(self.researcher),
            kb_path=kb,
            max_rounds=1,
            escalate_after=1,
        )
        self.app = builder.compile(checkpointer=InMemorySaver())
        self.config: RunnableConfig = {"configurable": {"thread_id": "escalation"}}
        self.events: list[dict[str, Any]] = []

    def step(self, given: Any) -> dict[str, Any]:
        async def run() -> dict[str, Any]:
            async for mode, chunk in self.app.astream(
                given,
                self.config,
                context=self.context,
                stream_mode=["custom", "values"],
            ):
                if mode == "custom":
                    self.events.append(cast(dict[str, Any], chunk))
            return dict((await self.app.aget_state(self.config)).values)

        return asyncio.run(run())

    def waiting(self) -> list[Any]:
        snapshot = asyncio.run(self.app.aget_state(self.config))
        return list(snapshot.interrupts)


@pytest.fixture
def run(
    fake_models: Callable[[BaseChatModel], str], landmarks_kb: str
) -> Iterator[Run]:
    run = Run(fake_models, landmarks_kb)
    run.step({"question": QUESTION})
    yield run


def results(state: dict[str, Any]) -> dict[str, Any]:
    return {r.values[0]: r for r in state["results"].values() if r.round == 0}


def test_the_branch_waits_while_its_siblings_finish(run: Run) -> None:
    (waiting,) = run.waiting()
    handoff = HandoffSummary.model_validate(waiting.value)
    assert handoff.values == ("orchard",) and handoff.urgency == "branch"
    assert "orchard broke" in handoff.reason and handoff.errors
    assert set(handoff.options) == {"retry", "skip", "hint", "abort"}
    finished = [e["values"] for e in run.events if e["event"] == "RESULT"]
    # every branch's result is out before the interrupt surfaces, the failed
    # one's included; no ESCALATE until the person decides
    assert sorted(finished) == ["glacier", "harbour", "lighthouse", "orchard"]
    assert not [e for e in run.events if e["event"] == "ESCALATE"]
    calls = run.researcher.calls
    assert all(calls[v] == 2 for v in ("harbour", "glacier", "lighthouse"))
    assert calls["orchard"] == 1


def test_retry_reruns_only_the_waiting_branch_once(run: Run) -> None:
    run.researcher.behaviour.clear()
    before = dict(run.researcher.calls)
    state = run.step(Command(resume="retry"))
    after = run.researcher.calls
    assert after["orchard"] == before["orchard"] + 2  # one task: two turns
    assert all(after[v] == before[v] for v in ("harbour", "glacier", "lighthouse"))
    orchard = results(state)["orchard"]
    assert (orchard.status, orchard.escalation) == ("success", "retry")
    assert state["report"] is not None and not state["report"].unresolved_gaps


def test_a_hint_reaches_the_brief_of_the_rerun(run: Run) -> None:
    run.researcher.behaviour.clear()
    state = run.step(Command(resume={"action": "hint", "hint": "try the cider"}))
    assert "A person's hint: try the cider" in run.researcher.briefs["orchard"][-1]
    assert results(state)["orchard"].escalation == "hint"


def test_skip_leaves_the_branch_failed_and_the_run_goes_on(run: Run) -> None:
    before = dict(run.researcher.calls)
    state = run.step(Command(resume="skip"))
    orchard = results(state)["orchard"]
    assert (orchard.status, orchard.escalation) == ("failed", "skip")
    assert run.researcher.calls["orchard"] == before["orchard"]
    assert state["report"].unresolved_gaps == ("orchard",)
    assert state["coverage"][-1].stopped != "a person aborted the run"
    (task_id,) = {e["task_id"] for e in run.events if e.get("values") == "orchard"}
    streamed = [e["event"] for e in run.events if e.get("task_id") == task_id]
    # each event once: the resumed run does not run the task's branch again
    assert streamed == ["DELEGATE", "RESULT", "ESCALATE"]


def test_abort_stops_all_further_delegation(run: Run) -> None:
    state = run.step(Command(resume="abort"))
    assert results(state)["orchard"].escalation == "abort"
    assert state["coverage"][-1].stopped == "a person aborted the run"
    assert {r.round for r in state["results"].values()} == {0}
    assert state["report"] is not None


def test_an_answer_that_is_no_decision_is_asked_again(run: Run) -> None:
    run.step(Command(resume="perhaps later"))
    (waiting,) = run.waiting()
    assert "not a decision" in waiting.value["problem"]
    state = run.step(Command(resume="skip"))
    assert results(state)["orchard"].escalation == "skip"


def test_without_a_checkpointer_a_branch_that_cannot_go_on_is_skipped(
    fake_models: Callable[[BaseChatModel], str], landmarks_kb: str
) -> None:
    run = Run(fake_models, landmarks_kb)

    async def values() -> dict[str, Any]:
        last: dict[str, Any] = {}
        async for state in builder.compile().astream(
            {"question": QUESTION}, context=run.context, stream_mode="values"
        ):
            last = state
        return last

    state = asyncio.run(values())
    assert results(state)["orchard"].escalation == "skip"
    escalated = [e for e in state["events"] if e.kind == "ESCALATE"]
    assert escalated and escalated[0].fields["asked"] is False


def test_a_fork_of_a_thread_waiting_on_a_person_sends_its_round_again(
    run: Run, tmp_path: Path
) -> None:
    assert asyncio.run(run.app.aget_state(run.config)).next == ("escalate",)
    run.researcher.behaviour.clear()
    fork = ForkFrom(thread_id="escalation")
    request = RunRequest(
        question=None,
        context=run.context,
        thread_id="forked",
        db=tmp_path / "unused.sqlite",
        fork=fork,
    )
    assert asyncio.run(forked_input(run.app, request, fork)) is None
    run.config = {"configurable": {"thread_id": "forked"}}
    state = run.step(None)
    orchard = results(state)["orchard"]
    assert (orchard.status, orchard.escalation) == ("success", None)
    assert state["report"] is not None and not run.waiting()
    # the thread it was copied from still waits for its person
    original = asyncio.run(
        run.app.aget_state({"configurable": {"thread_id": "escalation"}})
    )
    assert original.next == ("escalate",)


def test_a_subagent_run_by_hand_escalates_in_its_own_graph(
    fake_models: Callable[[BaseChatModel], str], landmarks_kb: str
) -> None:
    researcher = fake_models(Landmarks(behaviour={"orchard": "fail"}))
    context = Context(subagent_model=researcher, kb_path=landmarks_kb, escalate_after=1)
    app = subagent_graph.builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "by-hand"}}
    given = {"question": QUESTION, "values": ["orchard"], "agent": "researcher"}

    async def run(given: Any) -> tuple[dict[str, Any], Any]:
        await app.ainvoke(given, config, context=context)
        snapshot = await app.aget_state(config)
        return dict(snapshot.values), snapshot

    waiting, snapshot = asyncio.run(run(given))
    assert snapshot.next == ("escalate",)
    (result,) = waiting["results"].values()
    assert (result.status, result.escalation) == ("failed", "pending")
    done, _ = asyncio.run(run(Command(resume="skip")))
    (result,) = done["results"].values()
    assert (result.status, result.escalation) == ("failed", "skip")
    assert [e.kind for e in done["events"]] == ["DELEGATE", "RESULT", "ESCALATE"]
