"""`delegator serve` killed with SIGKILL mid-fan-out resumes, losing nothing.

The server checkpoints to SQLite or PostgreSQL (langgraph.json's
`checkpointer`, graphs/server_store.py); its
subagents ask a slow OpenAI-compatible server in this process, which counts
every brief it answers, so the counts survive the kill. After a restart on the
same file, a run on the same thread finishes the fan-out: only the subagents
unfinished at the kill ask the model again.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph_sdk import get_client

from runtime.kb import KnowledgeBase
from tests.integration.servers import BIN, running
from tests.integration.test_crash_resume import (
    IN_FLIGHT,
    QUESTION,
    SUBAGENTS,
    assert_only_unfinished_asked,
    fresh_database,
    postgres_finished,
    settled,
    sqlite_finished,
)
from tests.openai_replay import ReplayServer
from tests.quoting import QuotingResearcher

pytestmark = pytest.mark.integration


def context(kb: str) -> dict[str, Any]:
    return {
        "lead_model": "extractive",
        "subagent_model": "openai:replay",
        "kb_path": kb,
        "max_subagents": SUBAGENTS,
        "max_parallel": IN_FLIGHT,
        "max_rounds": 0,
    }


Store = tuple[dict[str, str], Callable[[], int], str]
"""A server's store as its environment, how to count the finished subagents of
the thread, and the thread (one of its own: the servers' thread records
outlive this test's files)."""


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    thread = str(uuid.uuid4())
    if request.param == "sqlite":
        db = tmp_path / "server.sqlite"
        return {"DELEGATOR_SERVER_DB": str(db)}, sqlite_finished(db, thread), thread
    url = fresh_database(request.getfixturevalue("postgres_url"), "served")
    return {"DELEGATOR_SERVER_POSTGRES": url}, postgres_finished(url, thread), thread


def test_a_killed_server_resumes_without_running_finished_subagents_again(
    freshwiki_kb: str,
    tmp_path: Path,
    store: Store,
) -> None:
    slow = QuotingResearcher(KnowledgeBase(freshwiki_kb), delay_s=0.8)
    store_env, recorded, thread = store
    command = [str(BIN / "delegator"), "serve", "--port", "{port}"]
    with ReplayServer(slow) as endpoint:
        env = {
            "OPENAI_BASE_URL": endpoint.base_url,
            "OPENAI_API_KEY": "test",
            "DELEGATOR_REQUESTS_PER_SECOND": "100",
            "DELEGATOR_KB_DIRS": str(Path(freshwiki_kb).parent),
            **store_env,
        }
        with running(command, env, tmp_path / "first.log") as first:
            asyncio.run(start(first.url, freshwiki_kb, thread))
            deadline = time.monotonic() + 60
            while recorded() < 3:
                assert first.process.poll() is None
                assert time.monotonic() < deadline, "no 3 results were checkpointed"
                time.sleep(0.05)
            os.kill(first.process.pid, signal.SIGKILL)
            first.process.wait(timeout=30)
        # a write the killed server sent may still be committing in the database
        done_before = settled(recorded)
        asked_before = settled(lambda: sum(slow.asked.values()))
        with running(command, env, tmp_path / "second.log") as second:
            result = asyncio.run(resume(second.url, freshwiki_kb, thread))
        asked_after = sum(slow.asked.values()) - asked_before
    assert done_before < SUBAGENTS  # it was killed mid-fan-out
    results = list(result["results"].values())
    assert len(results) == SUBAGENTS == len(slow.asked)
    assert all(r["status"] == "success" for r in results)
    assert_only_unfinished_asked(done_before, asked_after)
    assert result["report"]["summary"]["tasks"] == SUBAGENTS
    print(
        f"\nserver killed and resumed: {done_before} subagent(s) done before the "
        f"kill, {asked_after} run after it"
    )


async def start(url: str, kb: str, thread: str) -> None:
    api = get_client(url=url)
    await api.threads.create(thread_id=thread)
    await api.runs.create(
        thread, "research", input={"question": QUESTION}, context=context(kb)
    )


async def resume(url: str, kb: str, thread: str) -> dict[str, Any]:
    """Finish the thread's run on a restarted server: the thread's state."""
    api = get_client(url=url)
    await api.threads.create(thread_id=thread, if_exists="do_nothing")
    await api.runs.wait(thread, "research", input=None, context=context(kb))
    values = cast(dict[str, Any], (await api.threads.get_state(thread))["values"])
    await api.threads.delete(thread)
    return values
