"""Outputs own only what they create: no file outside the run's outputs changes."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import main
from tests.unit.test_cli import research_args


def state_of(path: Path) -> tuple[int, int, str]:
    """What a path is: its lstat mode and inode, and its content's digest."""
    found = path.lstat()
    content = path.read_bytes() if stat.S_ISREG(found.st_mode) else b""
    return found.st_mode, found.st_ino, hashlib.sha256(content).hexdigest()


def refused(
    argv: list[str], untouched: list[Path], capsys: pytest.CaptureFixture[str]
) -> str:
    """Run the CLI; assert exit 2, one error line, and the paths unchanged."""
    before = [state_of(p) for p in untouched]
    assert main(argv) == 2
    assert [state_of(p) for p in untouched] == before
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and err.count("\n") == 0
    return err


def test_a_device_is_never_replaced(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device = tmp_path / "full"
    os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    args = research_args(freshwiki_kb, "--json", str(device), "--quiet")
    assert "not a regular file" in refused(args, [device], capsys)


def test_a_fifo_is_never_replaced(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    args = research_args(freshwiki_kb, "--out", str(fifo), "--quiet")
    assert "not a regular file" in refused(args, [fifo], capsys)


def test_a_symbolic_link_is_never_replaced(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "kept.md"
    target.write_text("kept")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    args = research_args(freshwiki_kb, "--out", str(link), "--quiet")
    assert "symbolic link" in refused(args, [link, target], capsys)


def test_two_outputs_on_one_file_are_refused(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = tmp_path / "same"
    same.write_text("kept")
    args = research_args(freshwiki_kb, "--out", str(same), "--json", str(same))
    refused([*args, "--quiet"], [same], capsys)


def test_an_agent_definition_is_never_an_output(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    definition = agents / "mine.md"
    definition.write_text(
        "---\nname: mine\ndescription: d\ntools: [search]\n---\nbody\n"
    )
    hard_link = tmp_path / "also.md"
    os.link(definition, hard_link)
    args = research_args(freshwiki_kb, "--agents", str(agents), "--quiet")
    for output in (definition, hard_link):
        refused([*args, "--out", str(output)], [definition], capsys)


def test_a_forks_plan_is_never_its_output(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    argv = ["fork", "some-thread", "--plan", str(plan), "--out", str(plan)]
    refused(
        [*argv, "--kb", freshwiki_kb, "--db", str(tmp_path / "r.db")], [plan], capsys
    )


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.usefixtures("umask_022")
def test_outputs_keep_the_umask_mode_and_an_existing_files_mode(
    freshwiki_kb: str, tmp_path: Path
) -> None:
    page, kept = tmp_path / "report.html", tmp_path / "report.md"
    kept.write_text("old")
    kept.chmod(0o640)
    args = research_args(freshwiki_kb, "--html", str(page), "--out", str(kept))
    assert main([*args, "--quiet", "--db", str(tmp_path / "r.db")]) == 0
    assert stat.S_IMODE(page.stat().st_mode) == 0o644
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_a_checkpoint_store_must_be_delegators(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kb = Path(freshwiki_kb)
    args = research_args(freshwiki_kb, "--quiet", "--thread", "t")
    said = refused([*args, "--db", str(kb)], [kb], capsys)
    assert "not a delegator checkpoint store" in said
    other = tmp_path / "other_app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
    refused([*args, "--db", str(other)], [other], capsys)
    mine = tmp_path / "runs.sqlite"
    assert main([*args, "--db", str(mine)]) == 0
    assert main([*args, "--db", str(mine)]) == 0  # marked as its own
