"""Time and token limits: idle timeouts, heartbeats, and the run's budget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.research import builder
from runtime.context import Context
from state.budget import Budget
from state.handoff import HandoffSummary
from tests.support import research
from tests.unit.fakes import USAGE, FakeResearcher, scripted
from tests.unit.landmarks import NOTHING_MORE, PLAN, QUESTION, Landmarks
from tests.unit.test_creative_trap import NARROW_PLAN
from tests.unit.test_creative_trap import QUESTION as CREATIVE
from tests.unit.test_failures import narrow_run


def test_a_silent_subagent_fails_after_its_idle_timeout(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    silent = FakeResearcher(delay=3600)
    state = narrow_run(
        fake_models,
        creative_kb,
        silent,
        task_timeout_s=600,
        task_idle_timeout_s=0.5,
        task_attempts=1,
    )
    results = list(state["results"].values())
    assert {r.failure for r in results} == {"timeout"}
    assert {r.errors[0] for r in results} == {"silent for more than 0.5s"}


def test_every_model_and_tool_call_is_a_heartbeat(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    # each call takes 0.4s and a task makes two: longer than the idle timeout in
    # all, never silent for that long
    steady = FakeResearcher(delay=0.4, report_delay=0.4)
    state = narrow_run(
        fake_models,
        creative_kb,
        steady,
        task_timeout_s=600,
        task_idle_timeout_s=0.6,
        task_attempts=1,
    )
    results = list(state["results"].values())
    assert {r.status for r in results} == {"success"}
    assert all(r.execution_time_s > 0.6 for r in results)


def test_budgets_take_the_stricter_limit_and_say_what_is_spent() -> None:
    task = Budget(tokens=1000)
    agent = Budget(tokens=400, tool_calls=5)
    assert task.tighter(agent) == Budget(tokens=400, tool_calls=5)
    assert agent.wrap_up_reason(tokens=100, seconds=0, tool_calls=3) is None
    assert agent.wrap_up_reason(tokens=320, seconds=0, tool_calls=0) == (
        "its token budget was nearly spent (320 of 400)"
    )
    assert agent.wrap_up_reason(tokens=0, seconds=0, tool_calls=4) == (
        "its tool-call budget was nearly spent (4 of 5)"
    )


def test_a_spent_run_budget_stops_delegation_and_names_what_it_left(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    lead = scripted(
        NARROW_PLAN,
        {"dimensions": [{"name": "medium", "values": ["music", "film"]}]},
        "AI everywhere [1].",
    )
    context = Context(
        lead_model=fake_models(lead),
        subagent_model=fake_models(FakeResearcher()),
        kb_path=creative_kb,
        run_token_budget=10,
        on_escalation="skip",
    )
    state = research(CREATIVE, context)
    (coverage,) = state["coverage"]
    assert coverage.stopped is not None
    assert coverage.stopped.startswith("the run's token budget was spent")
    assert {r.round for r in state["results"].values()} == {0}
    report = state["report"]
    assert {"music", "film"} <= set(report.unresolved_gaps)
    assert "Delegation stopped: the run's token budget was spent" in report.markdown
    spent = sum(r.tokens for r in state["results"].values())
    assert report.summary.tokens_by_round == {"0": spent}
    assert spent == 3 * 2 * USAGE["total_tokens"]  # three tasks of two turns


def test_the_coordinator_escalates_a_spent_budget_and_a_person_extends_it(
    fake_models: Callable[[BaseChatModel], str], landmarks_kb: str
) -> None:
    few = {
        "direct_answer": False,
        "dimensions": [{"name": "landmark", "values": ["harbour", "glacier"]}],
        "facets": PLAN["facets"][:2],
    }
    lead = scripted(few, NOTHING_MORE, NOTHING_MORE, "Eastport [1].")
    context = Context(
        lead_model=fake_models(lead),
        subagent_model=fake_models(Landmarks()),
        kb_path=landmarks_kb,
        max_subagents=8,
        max_new_values=8,
        run_token_budget=30,
    )
    app = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "budget"}}

    def step(given: Any) -> Any:
        async def run() -> Any:
            await app.ainvoke(given, config, context=context)
            return await app.aget_state(config)

        return asyncio.run(run())

    paused = step({"question": QUESTION})
    (waiting,) = paused.interrupts
    handoff = HandoffSummary.model_validate(waiting.value)
    assert handoff.urgency == "run" and "token budget is spent" in handoff.reason
    assert len(handoff.values) == 6  # the landmarks the corpus probe added
    done = step(Command(resume="retry"))
    assert not done.next
    assert {r.round for r in done.values["results"].values()} == {0, 1}
    assert done.values["budget_granted"] == 30
    escalations = [e for e in done.values["events"] if e.kind == "ESCALATE"]
    assert escalations[0].fields["decision"] == "retry"
