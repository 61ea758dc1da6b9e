"""A run killed with SIGKILL mid-fan-out resumes from its thread, losing nothing.

A real `delegator research` subprocess checkpoints to SQLite or PostgreSQL; its
subagents ask a slow OpenAI-compatible server in this process, which counts
every subagent request, so the counts survive the kill.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from runtime.checkpoints import claim_store
from runtime.kb import KnowledgeBase
from tests.openai_replay import ReplayServer
from tests.quoting import QuotingResearcher
from tests.support import extractive_flags

pytestmark = pytest.mark.integration

QUESTION = (
    "Which natural disasters and severe weather events struck in 2022 and 2023, "
    "and what damage did each cause?"
)
SUBAGENTS = 8
FINISHED = (
    "SELECT count(*) FROM {writes} WHERE thread_id = '{thread}' AND checkpoint_ns = ''"
    " AND channel = 'results' AND checkpoint_id = (SELECT max(checkpoint_id) "
    "FROM checkpoints WHERE thread_id = '{thread}' AND checkpoint_ns = '')"
)
"""Subagents finished since the fan-out: results written against its checkpoint
(dispatch's reset of the results is written against the one before)."""
ANSWER_DELAY_S = 0.8
IN_FLIGHT = 2
"""Subagents at work at once. At a kill, each may have recorded its task's result
but not yet its node's: resumed, it replays that result without asking again."""


@pytest.fixture
def researcher(freshwiki_kb: str) -> Iterator[tuple[QuotingResearcher, str]]:
    slow = QuotingResearcher(KnowledgeBase(freshwiki_kb), delay_s=ANSWER_DELAY_S)
    with ReplayServer(slow) as server:
        yield slow, server.base_url
        slow.answering.set()  # no request is left waiting as the server stops


def delegator(base_url: str, kb: str, store: list[str], *extra: str) -> list[str]:
    return [
        str(Path(sys.executable).parent / "delegator"),
        "research",
        *extra,
        "--kb",
        kb,
        "--quiet",
        "--lead-model",
        "extractive",
        "--subagent-model",
        "openai:replay",
        "--max-subagents",
        str(SUBAGENTS),
        "--max-parallel",
        str(IN_FLIGHT),
        "--max-rounds",
        "0",
        *store,
    ]


def crash_and_resume(
    researcher: tuple[QuotingResearcher, str],
    kb: str,
    store: list[str],
    recorded: Callable[[], int],
    tmp_path: Path,
    stop: signal.Signals = signal.SIGKILL,
) -> tuple[int, int, dict[str, Any]]:
    """Stop a run after 3 recorded results, resume it; the counts and result."""
    slow, base_url = researcher
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test"}
    first = subprocess.Popen(
        delegator(base_url, kb, store, QUESTION, "--thread", "crash"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while recorded() < 3:
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        assert time.monotonic() < deadline, "no 3 results were recorded in time"
        time.sleep(0.05)
    first.send_signal(stop)
    first.wait(timeout=60)
    if stop != signal.SIGKILL:  # Ctrl-C, SIGTERM: a clean stop that says how to resume
        said = " ".join((first.stderr.read() if first.stderr else b"").decode().split())
        assert first.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[stop], said
        assert "nothing checkpointed is lost" in said
        assert "Resume with: delegator resume crash" in said
    # a write the killed process sent may still be committing in the database
    done_before = settled(recorded)
    asked_before = settled(lambda: sum(slow.asked.values()))
    out = tmp_path / "result.json"
    second = subprocess.run(
        delegator(base_url, kb, store, "--thread", "crash", "--json", str(out)),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 0, second.stderr
    asked_after = sum(slow.asked.values()) - asked_before
    assert done_before < SUBAGENTS  # it was killed mid-fan-out
    return done_before, asked_after, json.loads(out.read_text())


def settled(count: Callable[[], int], quiet_s: float = 0.5) -> int:
    """The count once it stopped changing: what was sent before a kill lands."""
    last = count()
    while True:
        time.sleep(quiet_s)
        if (now := count()) == last:
            return now
        last = now


def assert_nothing_lost_or_repeated(
    slow: QuotingResearcher, done_before: int, asked_after: int, result: dict[str, Any]
) -> None:
    tasks = result["tasks"]
    assert len(tasks) == SUBAGENTS == len(slow.asked)
    assert all(t["status"] == "success" for t in tasks)
    assert_only_unfinished_asked(done_before, asked_after)
    spans = [(f["source"]["passage_id"], f["quote"]) for f in result["findings"]]
    assert spans and len(spans) == len(set(spans))
    assert result["thread_id"] == "crash"
    print(
        f"\ncrash and resume: {done_before} subagent(s) done before the kill, "
        f"{asked_after} run after it, {sum(slow.asked.values())} requests in total"
    )


def assert_only_unfinished_asked(done_before: int, asked_after: int) -> None:
    """Finished subagents were not run again: only unfinished ones asked.

    Those in flight at the kill whose task result was recorded replay it.
    """
    unfinished = SUBAGENTS - done_before
    assert unfinished - IN_FLIGHT <= asked_after <= unfinished


def sqlite_finished(db: Path, thread: str = "crash") -> Callable[[], int]:
    """How many subagents of the fan-out a SQLite checkpoint file records."""

    def recorded() -> int:
        if not db.exists():
            return 0
        with closing(sqlite3.connect(db)) as conn:  # recovers a killed writer's WAL
            try:
                query = FINISHED.format(writes="writes", thread=thread)
                (count,) = conn.execute(query).fetchone()
            except sqlite3.OperationalError:  # not created yet
                return 0
        return int(count)

    return recorded


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_stopped_run_resumes_from_sqlite(
    researcher: tuple[QuotingResearcher, str],
    freshwiki_kb: str,
    tmp_path: Path,
    stop: signal.Signals,
) -> None:
    db = tmp_path / "runs.sqlite"
    done, after, result = crash_and_resume(
        researcher, freshwiki_kb, ["--db", str(db)], sqlite_finished(db), tmp_path, stop
    )
    assert_nothing_lost_or_repeated(researcher[0], done, after, result)


def fresh_database(admin_url: str, name: str) -> str:
    """The URL of a new, empty database `name` on the server of `admin_url`."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url.replace("/postgres?", f"/{name}?")


def postgres_finished(url: str, thread: str = "crash") -> Callable[[], int]:
    """How many subagents of the fan-out a PostgreSQL checkpoint store records."""

    def recorded() -> int:
        with psycopg.connect(url, autocommit=True) as conn:
            try:
                query = FINISHED.format(writes="checkpoint_writes", thread=thread)
                row = conn.execute(query).fetchone()
            except psycopg.errors.UndefinedTable:
                return 0
        return int(row[0]) if row else 0

    return recorded


def test_a_killed_run_resumes_from_postgresql(
    researcher: tuple[QuotingResearcher, str],
    freshwiki_kb: str,
    tmp_path: Path,
    postgres_url: str,
) -> None:
    url = fresh_database(postgres_url, "crash")
    done, after, result = crash_and_resume(
        researcher,
        freshwiki_kb,
        ["--checkpointer", url],
        postgres_finished(url),
        tmp_path,
    )
    assert_nothing_lost_or_repeated(researcher[0], done, after, result)


def test_a_thread_runs_once_at_a_time_and_a_killed_runs_lock_is_recovered(
    researcher: tuple[QuotingResearcher, str], freshwiki_kb: str, tmp_path: Path
) -> None:
    slow, base_url = researcher
    env = {**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test"}
    db = tmp_path / "runs.sqlite"
    store = ["--db", str(db)]
    first = subprocess.Popen(
        delegator(
            base_url,
            freshwiki_kb,
            store,
            QUESTION,
            "--thread",
            "crash",
            "--max-parallel",
            "1",
        ),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    recorded = sqlite_finished(db)
    deadline = time.monotonic() + 60
    while recorded() < 1:
        assert first.poll() is None, first.stderr.read() if first.stderr else ""
        assert time.monotonic() < deadline, "no result was recorded in time"
        time.sleep(0.05)
    slow.answering.clear()  # the first run waits from here, however slow the second
    second = subprocess.run(
        delegator(base_url, freshwiki_kb, store, "--thread", "crash"),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert first.poll() is None  # still running: the second never touched it
    assert second.returncode == 2
    [line] = second.stderr.strip().splitlines()
    assert "thread 'crash' is running in another process" in line
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    slow.answering.set()
    third = subprocess.run(
        delegator(base_url, freshwiki_kb, store, QUESTION, "--thread", "crash"),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert third.returncode == 0, third.stderr


@pytest.mark.parametrize("read_only", ["store", "folder"])
def test_a_read_only_checkpoint_store_is_one_line_and_no_traceback(
    read_only: str, freshwiki_kb: str, tmp_path: Path
) -> None:
    """A store on a read-only mount: exit 4 and one line, every time.

    The mount is a read-only bind of the test's own folder or file, in a mount
    namespace of the run's own (`unshare -m`): root writes through permissions.
    """
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "runs.sqlite"
    claim_store(db)
    before = db.read_bytes()
    target = {"store": db, "folder": folder}[read_only]
    mount = f"mount --bind {target} {target} && mount -o remount,bind,ro {target}"
    research = [
        str(Path(sys.executable).parent / "delegator"),
        "research",
        QUESTION,
        *extractive_flags(freshwiki_kb),
        "--db",
        str(db),
        "--quiet",
    ]
    command = ["unshare", "-m", "sh", "-c", f'{mount} && exec "$@"', "sh", *research]
    for _ in range(3):
        run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert run.returncode == 4, run.stderr
        (line,) = run.stderr.splitlines()
        assert line.startswith("error: ")
        assert {"store": "readonly database", "folder": "cannot lock"}[
            read_only
        ] in line
        assert "Traceback" not in run.stderr
    assert db.read_bytes() == before
