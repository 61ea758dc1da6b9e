"""DELEGATE/RESULT/COVERAGE events: on the custom stream and in the log."""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any, cast

import pytest

from graphs.research import graph
from state.events import Event
from tests.support import extractive, research

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
QUESTION = "Which natural disasters struck in 2022 and 2023?"


def test_log_line_format() -> None:
    event = Event(
        kind="DELEGATE",
        fields={
            "task_id": "t1",
            "agent": "researcher",
            "objective": 'a "b" c',
            "timeout": 30,
            "confidence": 0.951,
        },
    )
    assert event.log_line() == (
        "[DELEGATE] task_id=t1 agent=researcher objective=\"a 'b' c\" timeout=30"
        " confidence=0.95"
    )


@pytest.fixture
def streamed(freshwiki_kb: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    context = extractive(freshwiki_kb, max_rounds=1)

    async def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        custom: list[dict[str, Any]] = []
        final: dict[str, Any] = {}
        async for mode, chunk in graph.astream(
            {"question": QUESTION}, context=context, stream_mode=["custom", "values"]
        ):
            if mode == "custom":
                custom.append(cast(dict[str, Any], chunk))
            else:
                final = cast(dict[str, Any], chunk)
        return custom, final

    return asyncio.run(run())


def test_every_delegation_has_a_result_on_the_stream(
    streamed: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    custom, final = streamed
    delegated = [e["task_id"] for e in custom if e["event"] == "DELEGATE"]
    finished = [e["task_id"] for e in custom if e["event"] == "RESULT"]
    assert sorted(delegated) == sorted(finished) == sorted(final["results"])
    assert len(set(delegated)) == len(delegated)
    rounds = [
        e for e in custom if e["event"] == "COVERAGE" and e["stage"] == "gap_check"
    ]
    assert [e["round"] for e in rounds] == [g.round for g in final["coverage"]]
    assert [e["kind"] for e in (ev.model_dump() for ev in final["events"])].count(
        "DELEGATE"
    ) == len(delegated)


def test_events_are_logged_in_protocol_form(
    freshwiki_kb: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="delegator.events"):
        research(QUESTION, extractive(freshwiki_kb, max_rounds=0))
    lines = [r.getMessage() for r in caplog.records if r.name == "delegator.events"]
    delegate = re.compile(
        rf"^\[DELEGATE\] task_id={UUID} agent=\w+ "
        r'route="[^"]+" objective="[^"]+" timeout=\d'
    )
    result = re.compile(
        rf"^\[RESULT\] task_id={UUID} agent=\w+ status=(success|partial|failed)"
        r" exec=\d+\.\ds confidence=\d\.\d\d"
    )
    assert sum(bool(delegate.match(line)) for line in lines) == 5
    assert sum(bool(result.match(line)) for line in lines) == 5
    assert any(line.startswith("[COVERAGE] stage=gap_check round=0") for line in lines)
