"""The `delegator` command, run in-process and as the installed script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from tests.support import extractive_flags

QUESTION = "Which natural disasters and severe weather events struck in 2022 and 2023?"


def research_args(kb: str, *extra: str) -> list[str]:
    return ["research", QUESTION, *extractive_flags(kb), *extra]


def test_research_writes_report_and_json(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, result = tmp_path / "report.md", tmp_path / "result.json"
    code = main(
        research_args(freshwiki_kb, "--out", str(out), "--json", str(result), "--quiet")
    )
    assert code == 0
    printed = capsys.readouterr()
    assert printed.out == out.read_text()
    assert printed.err == ""
    data = json.loads(result.read_text())
    assert data["report"] == printed.out
    assert data["plan"]["facets"] and data["plan"]["dimensions"]
    assert data["findings"]
    for finding in data["findings"]:
        assert {"title", "url", "section", "doc_id"} <= set(finding["source"])
        assert finding["verified"] is True
    assert [g["round"] for g in data["coverage"]] == list(range(len(data["coverage"])))
    assert data["summary"]["tasks"] == len(
        {e["fields"]["task_id"] for e in data["events"] if e["kind"] == "DELEGATE"}
    )
    assert data["summary"]["wall_seconds"] > 0
    assert "## Coverage" in printed.out and "## Sources" in printed.out


def test_max_rounds_zero_disables_redelegation(
    freshwiki_kb: str, tmp_path: Path
) -> None:
    result = tmp_path / "result.json"
    assert (
        main(
            research_args(
                freshwiki_kb, "--max-rounds", "0", "--json", str(result), "--quiet"
            )
        )
        == 0
    )
    data = json.loads(result.read_text())
    assert len(data["coverage"]) == 1
    assert data["summary"]["tasks"] == 5
    planned = {v for f in data["plan"]["facets"][:5] for v in f["values"]}
    assert {f["values"][0] for f in data["findings"]} <= planned


def test_explicit_setting_beats_the_environment(
    freshwiki_kb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = tmp_path / "result.json"
    args = research_args(freshwiki_kb, "--json", str(result), "--quiet")
    monkeypatch.setenv("DELEGATOR_MAX_ROUNDS", "3")
    assert main(args) == 0
    by_environment = [c["round"] for c in json.loads(result.read_text())["coverage"]]
    assert main([*args, "--max-rounds", "0"]) == 0
    explicit = [c["round"] for c in json.loads(result.read_text())["coverage"]]
    assert by_environment[:2] == [0, 1] and explicit == [0]


def test_set_takes_any_setting_and_a_flag_of_its_own_wins(
    freshwiki_kb: str, tmp_path: Path
) -> None:
    result = tmp_path / "result.json"
    sets = ["--set", "max_rounds=0", "--set", "max_subagents=2"]
    assert (
        main(research_args(freshwiki_kb, *sets, "--json", str(result), "--quiet")) == 0
    )
    assert json.loads(result.read_text())["summary"]["tasks"] == 2
    flag = ["--max-subagents", "3"]
    assert main(research_args(freshwiki_kb, *sets, *flag, "--json", str(result))) == 0
    assert json.loads(result.read_text())["summary"]["tasks"] == 3


@pytest.mark.parametrize("stdout", ["broken", "closed"])
def test_a_reader_gone_from_stdout_loses_no_file(
    freshwiki_kb: str, tmp_path: Path, stdout: str
) -> None:
    result, report = tmp_path / "result.json", tmp_path / "report.md"
    script = Path(sys.executable).parent / "delegator"
    read, write = os.pipe()
    os.close(read)  # broken: nobody reads what is written
    args = research_args(freshwiki_kb, "--quiet", "--json", str(result))
    done = subprocess.run(
        [str(script), *args, "--max-rounds", "0", "--out", str(report)],
        stdout=write if stdout == "broken" else None,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None,
    )
    os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(result.read_text())["report"] == report.read_text()


def test_progress_goes_to_stderr(
    freshwiki_kb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(research_args(freshwiki_kb, "--max-rounds", "1")) == 0
    err = capsys.readouterr().err
    assert "plan" in err and "coverage" in err and "round 0 subagents" in err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["research", "   "], 2, "question is empty"),
        (["research", "why", "--max-rounds", "-1"], 2, "max_rounds must be 0 or more"),
        (["research", "why", "--max-parallel", "-1"], 2, "max_parallel must be 0 or"),
        (["research", "why", "--lead-model", "nope"], 2, "unknown model spec"),
        (["research", "why", "--set", "routing=fast"], 2, "routing must be one of"),
        (["research", "why", "--set", "max_rounds"], 2, "is not FIELD=VALUE"),
        (["research", "why", "--set", "rounds=2"], 2, "unknown setting 'rounds'"),
        (["eval", "--set", "task_attempts=x"], 2, "task_attempts='x' is not a valid"),
        (["research", "why", "--kb", "/nonexistent/kb.sqlite"], 4, "no knowledge base"),
        (["ingest", "/nonexistent/folder", "--kb", "/tmp/x.sqlite"], 4, "not exist"),
    ],
)
def test_failures_end_with_one_line_and_their_code(
    args: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == code
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1
    assert message in err


def test_a_folder_given_as_the_knowledge_base_is_told_how_to_build_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    assert main(["research", "why", "--kb", str(docs)]) == 4
    err = capsys.readouterr().err
    assert f"{docs} is a folder, not a knowledge base file" in err
    assert f"`delegator ingest {docs} --kb {docs}.sqlite`" in err


def test_the_current_folder_given_as_the_knowledge_base_is_told_how_to_build_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.chdir(docs)
    assert main(["research", "why", "--kb", "."]) == 4
    assert f"--kb {docs}.sqlite`" in capsys.readouterr().err


def test_debug_shows_the_traceback_and_keeps_the_exit_code(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["research", "why", "--kb", "/nonexistent/kb.sqlite", "--debug"]
    assert main(args) == 4
    err = capsys.readouterr().err
    assert "Traceback" in err
    assert err.strip().splitlines()[-1].startswith("error: no knowledge base")


def test_ingest_then_research_a_new_corpus(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, body in {
        "Comets": "Comets are icy bodies that grow tails near the Sun.",
        "Asteroids": "Asteroids are rocky bodies, most of them in the main belt.",
    }.items():
        (docs / f"{name}.md").write_text(f"# {name}\n\n## Nature\n\n{body}\n")
    kb = tmp_path / "kb.sqlite"
    assert main(["ingest", str(docs), "--kb", str(kb)]) == 0
    result = tmp_path / "r.json"
    assert (
        main(
            [
                "research",
                "What are comets and asteroids made of?",
                "--kb",
                str(kb),
                "--lead-model",
                "extractive",
                "--subagent-model",
                "extractive",
                "--json",
                str(result),
                "--quiet",
            ]
        )
        == 0
    )
    cited = {f["source"]["title"] for f in json.loads(result.read_text())["findings"]}
    assert cited == {"Comets", "Asteroids"}


def test_installed_script_runs(freshwiki_kb: str) -> None:
    script = Path(sys.executable).parent / "delegator"
    done = subprocess.run(
        [str(script), *research_args(freshwiki_kb, "--quiet")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"# {QUESTION}")


def test_the_page_is_written_beside_the_json_and_again_by_show(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, result = tmp_path / "report.html", tmp_path / "result.json"
    args = ["--quiet", "--html", str(page), "--json", str(result)]
    assert main(research_args(freshwiki_kb, *args)) == 0
    written = page.read_text()
    assert written.startswith("<!doctype html>")
    assert "Content-Security-Policy" in written
    again = tmp_path / "again.html"
    assert main(["show", str(result), "--html", str(again)]) == 0
    assert again.read_text() == written  # the page is a function of the result
    assert main(["show", str(page), "--html", str(tmp_path / "x.html")]) == 2
    assert "is not a result JSON" in capsys.readouterr().err
