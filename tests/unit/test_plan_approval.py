"""Plan approval, resume and fork: a person shapes the plan; runs branch off."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from cli import exits
from cli.main import main
from cli.runs import thread_history
from graphs.research import builder
from runtime.context import Context
from tests.support import extractive_flags
from tests.unit.fakes import FakeResearcher, scripted
from tests.unit.test_creative_trap import NARROW_PLAN, NOTHING_MORE, QUESTION


@pytest.fixture
def paused(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> tuple[Any, RunnableConfig, Context]:
    """A run stopped after planning, its plan waiting for a person."""
    lead = scripted(NARROW_PLAN, NOTHING_MORE, "AI [1].")
    context = Context(
        lead_model=fake_models(lead),
        subagent_model=fake_models(FakeResearcher()),
        kb_path=creative_kb,
        max_rounds=0,
        approve_plan=True,
    )
    app = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "plan"}}
    asyncio.run(app.ainvoke({"question": QUESTION}, config, context=context))
    return app, config, context


def resumed(paused: tuple[Any, RunnableConfig, Context], answer: Any) -> Any:
    app, config, context = paused

    async def run() -> Any:
        await app.ainvoke(Command(resume=answer), config, context=context)
        return await app.aget_state(config)

    return asyncio.run(run())


def sent(state: dict[str, Any]) -> list[tuple[str, ...]]:
    return sorted(r.values for r in state["results"].values())


def test_the_plan_waits_for_a_person_before_anything_is_sent(
    paused: tuple[Any, RunnableConfig, Context],
) -> None:
    app, config, _ = paused
    snapshot = asyncio.run(app.aget_state(config))
    (waiting,) = snapshot.interrupts
    assert waiting.value["kind"] == "plan"
    assert [f["values"] for f in waiting.value["plan"]["facets"]] == [
        ["visual art"],
        ["graphic design"],
        ["photography"],
    ]
    assert not snapshot.values.get("results")


def test_edited_facets_are_the_ones_sent(
    paused: tuple[Any, RunnableConfig, Context],
) -> None:
    edit = {
        "action": "edit",
        "facets": [
            {
                "id": "f0",
                "title": "Music",
                "brief": "AI in music.",
                "values": ["music"],
            },
            {"id": "f1", "title": "Film", "brief": "AI in film.", "values": ["film"]},
        ],
    }
    done = resumed(paused, edit)
    assert sent(done.values) == [("film",), ("music",)]
    assert done.values["plan"].values[:2] == ("music", "film")
    assert not done.next


def test_added_values_get_facets_and_accept_keeps_the_plan(
    paused: tuple[Any, RunnableConfig, Context],
) -> None:
    done = resumed(paused, {"action": "add", "values": {"medium": ["music"]}})
    assert ("music",) in sent(done.values)
    assert len(sent(done.values)) == 4


def test_an_edit_that_breaks_the_plan_is_asked_again(
    paused: tuple[Any, RunnableConfig, Context],
) -> None:
    again = resumed(paused, {"action": "edit", "facets": []})
    (waiting,) = again.interrupts
    assert "an edit needs the facets" in waiting.value["problem"]
    done = resumed(paused, "accept")
    assert sent(done.values) == [("graphic design",), ("photography",), ("visual art",)]


def test_resume_from_the_command_line_with_a_json_decision(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lead = fake_models(scripted(NARROW_PLAN, NOTHING_MORE, "AI [1]."))
    common = [
        "--kb",
        creative_kb,
        "--lead-model",
        lead,
        "--subagent-model",
        fake_models(FakeResearcher()),
        "--max-rounds",
        "0",
        "--db",
        str(tmp_path / "runs.sqlite"),
        "--quiet",
    ]
    assert main(["research", QUESTION, "--thread", "p", "--approve-plan", *common]) == (
        exits.ESCALATED
    )
    err = capsys.readouterr().err
    assert '"kind": "plan"' in err
    assert "--decision accept|" in err and "retry" not in err
    add = json.dumps({"action": "add", "values": {"medium": ["music"]}})
    out = tmp_path / "result.json"
    # the review was asked for when the run was planned: no --approve-plan again
    code = main(["resume", "p", "--decision", add, "--json", str(out), *common])
    assert code == exits.OK
    result = json.loads(out.read_text())
    assert ["music"] in [t["values"] for t in result["tasks"]]


def test_a_fork_makes_a_second_thread_and_leaves_the_first_as_it_was(
    freshwiki_kb: str, tmp_path: Path
) -> None:
    db = tmp_path / "runs.sqlite"
    common = [*extractive_flags(freshwiki_kb), "--db", str(db), "--quiet"]
    question = "Which natural disasters struck in 2022 and 2023?"
    assert (
        main(["research", question, "--thread", "a", "--max-rounds", "1", *common]) == 0
    )
    before = asyncio.run(thread_history("a", db, None))
    fan_out = next(c for c in before if c.next and c.next[0] == "subagent")  # round 1
    out = tmp_path / "fork.json"
    code = main(
        [
            "fork",
            "a",
            "--checkpoint",
            fan_out.checkpoint_id,
            "--thread",
            "b",
            "--max-rounds",
            "2",
            "--json",
            str(out),
            *common,
        ]
    )
    assert code == 0
    assert asyncio.run(thread_history("a", db, None)) == before  # untouched
    forked = json.loads(out.read_text())
    assert forked["thread_id"] == "b"
    rounds = [c["round"] for c in forked["coverage"]]
    assert rounds[:2] == [0, 1] and len(rounds) >= 2  # it went on from round 1
    assert len(asyncio.run(thread_history("b", db, None))) >= 2
