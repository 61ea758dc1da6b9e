"""The whole graph against real model behaviour, replayed over HTTP.

A small OpenAI-compatible server inside the test answers the real `ChatOpenAI`
client with replies a real small model gave to these prompts (see
`tests/data/model_replies/`) and with scripted hostile ones. Whatever the model
writes, the report claims only what code verified.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cli import exits
from cli.main import main
from roles.verify import SHORT_QUOTE
from runtime.kb import KnowledgeBase
from tests.openai_replay import (
    ReplayServer,
    Reply,
    by_role,
    recorded,
    reply_from_record,
    role_of,
    sequence,
)
from tests.unit.fakes import evidence_shown, values_in_brief

DISASTERS = (
    "Which natural disasters and severe weather events struck in 2022 and 2023, "
    "and what damage did each cause?"
)
RECORDS = recorded()
Responder = Callable[[dict[str, Any]], Reply]


def record(run: str, role: str, n: int = 0) -> Reply:
    """The `n`-th recorded reply of a run and role."""
    found = [r for r in RECORDS if r["run"] == run and r["role"] == role]
    return reply_from_record(found[n])


@pytest.fixture
def endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[[Responder], ReplayServer]]:
    """Start a replay server answering with a responder; point both roles at it."""
    servers: list[ReplayServer] = []

    def start(responder: Responder) -> ReplayServer:
        server = ReplayServer(responder)
        server.start()
        servers.append(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "replay")
        monkeypatch.setenv("DELEGATOR_REQUESTS_PER_SECOND", "100")
        return server

    yield start
    for server in servers:
        server.kill()


def run_cli(
    kb: str, tmp_path: Path, *extra: str, question: str = DISASTERS
) -> tuple[int, str, dict[str, Any]]:
    out = tmp_path / "result.json"
    code = main(
        [
            "research",
            question,
            "--kb",
            kb,
            "--quiet",
            "--lead-model",
            "openai:replay",
            "--subagent-model",
            "openai:replay",
            "--json",
            str(out),
            *extra,
        ]
    )
    data = json.loads(out.read_text()) if out.exists() else {}
    return code, data.get("report", ""), data


def assert_no_empty_section(report: str) -> None:
    for section in report.split("\n## ")[1:]:
        heading, _, body = section.partition("\n")
        assert body.strip(), f"empty section {heading!r}"


def test_recorded_small_model_run_claims_nothing_it_cannot_verify(
    endpoint: Callable[[Responder], ReplayServer],
    freshwiki_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no circuit opens, so no task falls back to the model-free extractor
    monkeypatch.setenv("DELEGATOR_BREAKER_THRESHOLD", "99")
    endpoint(
        by_role(
            {
                "plan": record("a", "plan"),  # direct_answer: true, four values
                "subagent": sequence(
                    record("bf", "subagent", 0),  # truncated JSON
                    record("bf", "subagent", 2),  # an invented passage id
                ),
                "enumerate": record("bf", "enumerate", 0),
                "write": record("a", "write"),
            }
        )
    )
    # a facet failed twice would wait for a person: this run goes on without
    code, report, data = run_cli(
        freshwiki_kb, tmp_path, "--max-rounds", "1", "--no-interrupt"
    )
    assert not data["plan"]["direct_answer"]  # a broad question is delegated
    assert len(data["plan"]["facets"]) >= 2
    assert data["findings"] == []  # nothing the model invented is verified
    tasks = data["tasks"]
    assert tasks and all(t["status"] == "failed" for t in tasks)
    assert {t["failure"] for t in tasks} == {"invalid output"}
    assert code == exits.INCOMPLETE
    assert report.splitlines()[2].startswith("**Incomplete run:**")
    assert "Coverage: 0 of" in report
    assert "## Sources" not in report and "## Summary" not in report
    assert_no_empty_section(report)
    assert capsys.readouterr().out == report


def test_a_direct_answer_to_a_broad_question_is_turned_into_delegation(
    endpoint: Callable[[Responder], ReplayServer], freshwiki_kb: str, tmp_path: Path
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    floods = kb.passage("2022_Pakistan_floods#0")
    assert floods is not None
    quote = floods.text.split(". ")[0] + "."

    def subagent(body: dict[str, Any]) -> Reply:
        brief = body["messages"][1]["content"]
        (value,) = values_in_brief(brief)
        good = value.casefold().startswith("flood")
        finding = {
            "claim": quote if good else "It was bad.",
            "quote": quote if good else "a",
            "passage_id": "2022_Pakistan_floods#0",
            "values": [value],
        }
        return Reply(content=json.dumps({"findings": [finding]}))

    endpoint(
        by_role(
            {
                "plan": Reply(
                    content='{"direct_answer": true, "dimensions": [], "facets": []}'
                ),
                "enumerate": sequence(
                    Reply(
                        content=json.dumps(
                            {
                                "dimensions": [
                                    {
                                        "name": "kind",
                                        "values": ["floods", "earthquakes"],
                                    }
                                ]
                            }
                        )
                    ),
                    Reply(content='{"dimensions": []}'),
                ),
                "subagent": subagent,
                "write": Reply(
                    content="Floods struck Pakistan [1]. Unbacked claim. "
                    "Earthquakes flattened Pakistan in 2022 [1]."
                ),
            }
        )
    )
    # room in round 1 for the lead's two values after the five the holdings add
    code, report, data = run_cli(
        freshwiki_kb, tmp_path, "--max-rounds", "1", "--max-subagents", "7"
    )
    rows = {r["value"]: r["status"] for r in data["coverage_table"]}
    assert rows["floods"] == "covered"
    assert rows["earthquakes"] == "not covered"  # its one-letter quote was dropped
    assert DISASTERS not in rows  # the question itself is never a value
    assert data["summary"]["dropped_by_reason"][SHORT_QUOTE] >= 1
    assert "Floods struck Pakistan [1]." in report
    assert "Unbacked claim" not in report  # it cites nothing
    assert "Earthquakes" not in report  # its source says no such thing
    assert data["summary"]["sentences_kept"] == 1
    assert data["summary"]["sentences_dropped"] == 1
    assert data["summary"]["sentences_unsupported"] == 1
    assert code == 0
    assert_no_empty_section(report)


def test_prose_text_tool_calls_and_runaway_output(
    endpoint: Callable[[Responder], ReplayServer], freshwiki_kb: str, tmp_path: Path
) -> None:
    plan = {
        "dimensions": [{"name": "event", "values": ["Storm Eunice", "Cyclone Mocha"]}],
        "facets": [
            {
                "title": "Eunice",
                "brief": "Storm Eunice damage.",
                "values": ["Storm Eunice"],
            },
            {
                "title": "Mocha",
                "brief": "Cyclone Mocha damage.",
                "values": ["Cyclone Mocha"],
            },
        ],
    }
    runaway = '{"findings": [' + '{"claim": "x", ' * 2000

    def subagent(body: dict[str, Any]) -> Reply:
        brief = body["messages"][1]["content"]
        turns = [m for m in body["messages"] if m["role"] == "tool"]
        if "Storm Eunice" in brief:
            if not turns:
                call = {"name": "search", "arguments": {"query": "Storm Eunice damage"}}
                return Reply(
                    content=f"I will search.\n```json\n{json.dumps(call)}\n```"
                )
            handle, number, _ = evidence_shown(turns[0]["content"])[0]
            finding = {"evidence": handle, "sentences": [number]}
            return Reply(content=json.dumps({"findings": [finding]}))
        if any("neither a tool call" in str(m["content"]) for m in body["messages"]):
            return Reply(content=runaway, finish_reason="length")
        return Reply(content="Cyclone Mocha was very destructive, I believe.")

    endpoint(
        by_role(
            {
                "plan": Reply(content=json.dumps(plan)),
                "enumerate": Reply(content='{"dimensions": []}'),
                "subagent": subagent,
                "write": Reply(content="Eunice hit Britain [1]."),
            }
        )
    )
    code, report, data = run_cli(freshwiki_kb, tmp_path, "--max-rounds", "0")
    status = {t["values"][0]: t for t in data["tasks"]}
    assert status["Storm Eunice"]["status"] == "success"
    assert status["Storm Eunice"]["steps"] >= 3  # the text tool call ran
    assert status["Cyclone Mocha"]["status"] == "failed"
    assert status["Cyclone Mocha"]["failure"] == "invalid output"
    rows = {r["value"]: r["status"] for r in data["coverage_table"]}
    assert rows["Storm Eunice"] == "covered"
    assert rows["Cyclone Mocha"] == "not covered"
    assert "length limit" in status["Cyclone Mocha"]["errors"][0]
    assert code == 0


def test_a_server_that_dies_mid_run_is_reported_not_hidden(
    endpoint: Callable[[Responder], ReplayServer],
    freshwiki_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DELEGATOR_TASK_ATTEMPTS", "1")  # a dead server stays dead
    plan = {"dimensions": [{"name": "event", "values": ["Storm Eunice", "Mocha"]}]}
    servers: list[ReplayServer] = []

    def dies_after_planning(body: dict[str, Any]) -> Reply:
        if role_of(body) == "plan":
            return Reply(content=json.dumps(plan))
        servers[0].kill()
        return Reply(content="never sent")

    servers.append(endpoint(dies_after_planning))
    code, report, data = run_cli(freshwiki_kb, tmp_path, "--max-rounds", "0")
    assert code == exits.INCOMPLETE
    assert {t["failure"] for t in data["tasks"]} == {"unreachable"}
    assert report.splitlines()[2].startswith("**Incomplete run:**")
    assert_no_empty_section(report)
