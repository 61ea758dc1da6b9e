"""The CLI's runs live on checkpointed threads: escalate, resume, refuse."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel

from cli import exits
from cli.main import main
from tests.unit.fakes import scripted
from tests.unit.landmarks import NOTHING_MORE, QUESTION, Landmarks
from tests.unit.test_escalation import PLAN


@pytest.fixture
def cli(
    fake_models: Callable[[BaseChatModel], str],
    landmarks_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., int]:
    """`delegator research` on the landmarks, the orchard's subagent failing."""
    monkeypatch.setenv("DELEGATOR_ESCALATE_AFTER", "1")
    lead = fake_models(scripted(PLAN, NOTHING_MORE, "Eastport [1].", NOTHING_MORE))
    researcher = fake_models(Landmarks(behaviour={"orchard": "fail"}))

    def run(*args: str) -> int:
        return main(
            [
                "research",
                *args,
                "--kb",
                landmarks_kb,
                "--quiet",
                "--lead-model",
                lead,
                "--subagent-model",
                researcher,
                "--max-rounds",
                "0",
                "--db",
                str(tmp_path / "runs.sqlite"),
                "--json",
                str(tmp_path / "result.json"),
            ]
        )

    return run


def test_an_escalated_run_waits_then_resumes_with_a_decision(
    cli: Callable[..., int], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(QUESTION, "--thread", "t1") == exits.ESCALATED
    said = capsys.readouterr().err
    assert '"urgency": "branch"' in said and "orchard broke" in said
    assert "Resume with: delegator resume t1 --db" in " ".join(said.split())
    assert not (tmp_path / "result.json").exists()  # no report yet
    assert cli("--thread", "t1", "--decision", "skip") == exits.OK
    result = json.loads((tmp_path / "result.json").read_text())
    assert result["thread_id"] == "t1"
    tasks = {t["values"][0]: t for t in result["tasks"]}
    assert tasks["orchard"]["escalation"] == "skip"
    assert "orchard" in result["uncovered"]  # with what the corpus probe added


def test_no_interrupt_takes_skip_in_one_go(
    cli: Callable[..., int], tmp_path: Path
) -> None:
    assert cli(QUESTION, "--thread", "t2", "--no-interrupt") == exits.OK
    result = json.loads((tmp_path / "result.json").read_text())
    escalated = [e for e in result["events"] if e["kind"] == "ESCALATE"]
    assert [e["fields"]["decision"] for e in escalated] == ["skip"]
    assert escalated[0]["fields"]["asked"] is False


def test_a_thread_is_resumed_only_as_it_can_be(
    cli: Callable[..., int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(QUESTION, "--thread", "t3") == exits.ESCALATED
    capsys.readouterr()
    assert cli("Another question?", "--thread", "t3") == exits.BAD_INPUT
    assert "holds an unfinished run of another question" in capsys.readouterr().err
    assert cli("--thread", "t3", "--decision", "maybe") == exits.ESCALATED
    assert "not a decision" in capsys.readouterr().err  # asked again
    assert cli("--thread", "t3", "--decision", "abort") == exits.OK
    capsys.readouterr()
    assert cli("--thread", "t3") == exits.BAD_INPUT
    assert "holds no unfinished run" in capsys.readouterr().err
    assert cli("--thread", "never-started") == exits.BAD_INPUT
