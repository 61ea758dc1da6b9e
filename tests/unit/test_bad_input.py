"""Every bad input ends with one `error:` line and its exit code; nothing is lost."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path
from typing import Any, cast

import pytest

from cli import exits
from cli.main import main
from graphs.subagent import graph as subagent_graph
from runtime.context import ConfigError, Context
from runtime.local_engine import LocalModelError
from state.graph import SubagentInput
from state.question import QuestionError, check_question
from tests.openai_replay import ReplayServer, Reply, by_role
from tests.support import extractive

QUESTION = "Which natural disasters struck in 2022 and 2023?"


def research(kb: str, *extra: str, question: str = QUESTION) -> list[str]:
    return [
        "research",
        question,
        "--kb",
        kb,
        "--quiet",
        "--lead-model",
        "extractive",
        "--subagent-model",
        "extractive",
        "--max-rounds",
        "0",
        *extra,
    ]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    return lines[0]


def test_a_question_of_undecodable_bytes_is_refused() -> None:
    undecodable = b"floods \xff\xfe in 2022".decode("utf-8", "surrogateescape")
    with pytest.raises(QuestionError, match="not valid UTF-8"):
        check_question(undecodable)
    assert check_question("floods\x1b[31m in\x07 2022") == "floods [31m in 2022"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_rounds": "3"}, "max_rounds must be a whole number, not str '3'"),
        ({"max_rounds": True}, "max_rounds must be a whole number"),
        ({"task_timeout_s": float("nan")}, "finite number"),
        ({"lead_timeout_s": float("inf")}, "finite number"),
        ({"kb_path": 7}, "kb_path must be a string"),
        ({"max_subagents": 0}, "at least 1"),
    ],
)
def test_context_values_sent_to_the_server_are_checked(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Context(**settings)


def test_kb_path_is_limited_to_the_allowed_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELEGATOR_KB_DIRS", str(tmp_path / "allowed"))
    assert Context(kb_path=str(tmp_path / "allowed" / "kb.sqlite"))
    for outside in ("/etc/passwd", str(tmp_path / "allowed" / ".." / "x.sqlite")):
        with pytest.raises(ConfigError, match="outside the folders") as err:
            Context(kb_path=outside)
        assert "exist" not in str(err.value)  # it tells nothing of the file


def test_a_link_out_of_the_allowed_folders_is_refused_before_it_is_opened(
    freshwiki_kb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "inside.sqlite").symlink_to(freshwiki_kb)  # leads out of `allowed`
    monkeypatch.setenv("DELEGATOR_KB_DIRS", str(allowed))
    context = Context(kb_path=str(allowed / "inside.sqlite"))  # judged as written
    with pytest.raises(ConfigError, match="kb_path is outside the folders"):
        context.check_paths(follow_links=True)


def test_an_output_onto_the_knowledge_base_is_refused(
    freshwiki_kb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = digest(Path(freshwiki_kb))
    assert main(research(freshwiki_kb, "--out", freshwiki_kb)) == exits.BAD_INPUT
    assert "is an input" in one_error_line(capsys.readouterr().err)
    assert digest(Path(freshwiki_kb)) == before


@pytest.mark.parametrize("where", ["read-only place", "parent is a file"])
def test_an_unwritable_output_loses_nothing_else(
    where: str,
    freshwiki_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "file").write_text("x")
    bad = {
        "read-only place": Path("/proc/delegator-report.md"),  # even root cannot
        "parent is a file": tmp_path / "file" / "report.md",
    }[where]
    good = tmp_path / "result.json"
    code = main(research(freshwiki_kb, "--out", str(bad), "--json", str(good)))
    printed = capsys.readouterr()
    assert code == exits.DATA
    assert printed.out.startswith("# ")  # the report reached stdout first
    assert json.loads(good.read_text())["report"] == printed.out
    assert f"could not write {bad}" in one_error_line(printed.err)
    assert not list(tmp_path.glob(".result.json.*"))  # no temporary file left


@pytest.mark.parametrize(
    "reply",
    [
        Reply(
            raw_body="<html><body>Bad gateway</body></html>", content_type="text/html"
        ),
        Reply(raw_body="this is not json"),
        Reply(raw_body='{"id": "x", "object": "chat.completion"}'),
    ],
    ids=["html", "not json", "no choices"],
)
def test_an_endpoint_that_answers_no_completion_is_one_clear_error(
    reply: Reply,
    freshwiki_kb: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ReplayServer(by_role({"plan": reply})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "replay")
        args = research(freshwiki_kb)
        args[args.index("--lead-model") + 1] = "openai:replay"
        assert main(args) == exits.MODEL
    assert "not a chat completion" in one_error_line(capsys.readouterr().err)


def test_a_lead_past_its_deadline_is_a_model_failure_not_a_file_one(
    freshwiki_kb: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the deadline is a TimeoutError, which Python counts among OSErrors (exit 4);
    # a late plan gives way to the knowledge base's, which cannot plan this one
    unknown = "How do zorblax quintessorials flimmer?"
    with ReplayServer(by_role({"plan": Reply(content="{}", delay_s=5)})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "replay")
        args = research(freshwiki_kb, "--set", "lead_timeout_s=0.5", question=unknown)
        args[args.index("--lead-model") + 1] = "openai:replay"
        assert main(args) == exits.MODEL
    line = one_error_line(capsys.readouterr().err)
    assert "did not finish planning within 0.5s" in line
    assert "nor can the knowledge base plan it" in line


def test_ctrl_c_stops_cleanly(
    freshwiki_kb: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("cli.main.run_thread", interrupted)
    args = [*research(freshwiki_kb), "--thread", "t-ctrl-c"]
    assert main(args) == exits.INTERRUPTED
    said = " ".join(capsys.readouterr().err.split())
    assert "stopped; nothing checkpointed is lost" in said
    assert "Resume with: delegator resume t-ctrl-c --db" in said


def test_a_bad_request_rate_is_bad_input(
    freshwiki_kb: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DELEGATOR_REQUESTS_PER_SECOND", "abc")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    args = research(freshwiki_kb)
    args[args.index("--lead-model") + 1] = "openai:rate"
    assert main(args) == exits.BAD_INPUT
    assert "not a positive number" in one_error_line(capsys.readouterr().err)


def test_local_model_files_are_limited_to_the_allowed_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELEGATOR_MODEL_DIRS", str(tmp_path))
    with pytest.raises(LocalModelError, match="outside the folders") as err:
        Context(subagent_model="local:/etc/passwd")
    assert "exist" not in str(err.value) and "GGUF" not in str(err.value)
    with pytest.raises(LocalModelError, match="no model file"):
        Context(subagent_model=f"local:{tmp_path / 'absent.gguf'}")


def test_a_number_too_large_for_any_setting_is_one_line(
    freshwiki_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DELEGATOR_TASK_TOOL_CALLS", "99999999999999999999")
    args = research(freshwiki_kb, "--db", str(tmp_path / "r.db"))
    assert main(args) == exits.BAD_INPUT
    assert "task_tool_calls must be at most" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("flag", [["--limit", "-1"], ["--concurrency", "0"]])
def test_eval_counts_below_one_are_refused(flag: list[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["eval", *flag])
    assert stopped.value.code == exits.BAD_INPUT


@pytest.mark.parametrize("values", ["floods", [{"name": "floods"}], [["floods"]], []])
def test_the_subagent_graph_refuses_values_that_are_no_list_of_strings(
    values: Any, freshwiki_kb: str
) -> None:
    given = cast(SubagentInput, {"question": "Which floods struck?", "values": values})
    with pytest.raises(QuestionError, match="values"):
        asyncio.run(subagent_graph.ainvoke(given, context=extractive(freshwiki_kb)))


def test_show_never_opens_a_fifo_and_refuses_a_result_too_large(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    page = tmp_path / "page.html"
    assert main(["show", str(fifo), "--html", str(page)]) == exits.BAD_INPUT
    assert "not a regular file" in one_error_line(capsys.readouterr().err)
    big = tmp_path / "big.json"
    big.write_text("{}" + " " * 100)
    monkeypatch.setattr("cli.main.MAX_RESULT_BYTES", 50)
    assert main(["show", str(big), "--html", str(page)]) == exits.BAD_INPUT
    assert "larger than 50 bytes" in one_error_line(capsys.readouterr().err)
    assert not page.exists()


def test_a_gate_outside_the_allowed_packages_is_one_line(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = research(
        freshwiki_kb, "--db", str(tmp_path / "r.db"), "--set", "gates=os:system"
    )
    assert main(args) == exits.BAD_INPUT
    said = one_error_line(capsys.readouterr().err)
    assert "gate 'os:system' is not in a package DELEGATOR_GATE_PACKAGES allows" in said
