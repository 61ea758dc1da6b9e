"""`delegator serve`: concurrent runs, API keys and escalations over the API.

The server's subagent model is an OpenAI-compatible server in this process:
the model `quick` answers each brief with true quotes, `hang` never answers in
time, `reject` answers 400.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from runtime.auth import identity_of
from runtime.kb import KnowledgeBase
from tests.integration.servers import BIN, running
from tests.openai_replay import ReplayServer, Reply
from tests.quoting import QuotingResearcher

pytestmark = pytest.mark.integration

KEYS = ("key-a", "key-b")
QUESTIONS = (
    "Which natural disasters and severe weather events struck in 2022 and 2023?",
    "Which sporting events took place in 2022 and 2023, and who won them?",
    "Which elections and government crises happened in 2022?",
)


class Models(QuotingResearcher):
    """`quick`, `hang` and `reject`, by the model a request names."""

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body.get("model") == "reject":
            return Reply(content="this model does not exist", status=400)
        return super().__call__(body)


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, freshwiki_kb: str
) -> Iterator[str]:
    models = Models(KnowledgeBase(freshwiki_kb), hang_s=300)
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with ReplayServer(models) as endpoint:
        env = {
            "OPENAI_BASE_URL": endpoint.base_url,
            "OPENAI_API_KEY": "test",
            "DELEGATOR_REQUESTS_PER_SECOND": "100",
            "DELEGATOR_API_KEYS": ",".join(KEYS),
            "DELEGATOR_KB_DIRS": str(tmp_path_factory.getbasetemp()),
        }
        command = [str(BIN / "delegator"), "serve", "--port", "{port}", "--jobs", "8"]
        with running(command, env, log) as server:
            yield server.url


def client(url: str, key: str | None = "key-a") -> LangGraphClient:
    return get_client(url=url, api_key=key)


def context(kb: str, model: str, **extra: Any) -> dict[str, Any]:
    return {
        "lead_model": "extractive",
        "subagent_model": f"openai:{model}",
        "kb_path": kb,
        "max_rounds": 0,
        "max_subagents": 3,
        **extra,
    }


def test_a_hanging_run_does_not_delay_the_runs_started_after_it(
    served: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
        api = client(served)
        slow_thread = await api.threads.create()
        slow = await api.runs.create(
            slow_thread["thread_id"],
            "research",
            input={"question": QUESTIONS[0]},
            context=context(
                freshwiki_kb, "hang", task_timeout_s=600, task_idle_timeout_s=600
            ),
        )
        started = time.perf_counter()
        threads = [await api.threads.create() for _ in QUESTIONS]
        runs = [
            await api.runs.create(
                t["thread_id"],
                "research",
                input={"question": q},
                context=context(freshwiki_kb, "quick"),
            )
            for t, q in zip(threads, QUESTIONS, strict=True)
        ]
        outputs = [
            cast(dict[str, Any], await api.runs.join(t["thread_id"], r["run_id"]))
            for t, r in zip(threads, runs, strict=True)
        ]
        seconds = time.perf_counter() - started
        still = await api.runs.get(slow_thread["thread_id"], slow["run_id"])
        print(f"\n3 runs done in {seconds:.1f}s while the first was {still['status']}")
        states = [
            cast(
                dict[str, Any], (await api.threads.get_state(t["thread_id"]))["values"]
            )
            for t in threads
        ]
        await api.runs.cancel(slow_thread["thread_id"], slow["run_id"])
        return outputs, states, str(still["status"])

    outputs, states, slow_status = asyncio.run(run())
    assert slow_status in ("pending", "running")  # it still hangs
    for output, question in zip(outputs, QUESTIONS, strict=True):
        assert output["question"] == question  # each its own
        summary = output["report"]["summary"]
        assert summary["tasks"] >= 1 and summary["failures"] == 0
        assert output["report"]["citations"]
    task_ids = [set(o["results"]) for o in states]
    assert all(task_ids) and not any(
        task_ids[i] & task_ids[j] for i in range(3) for j in range(i + 1, 3)
    )  # each thread holds only its own tasks


def test_a_request_without_a_valid_key_gets_401(served: str) -> None:
    async def status(key: str | None) -> int:
        try:
            await client(served, key).threads.create()
        except httpx.HTTPStatusError as err:
            return err.response.status_code
        return 200

    assert asyncio.run(status(None)) == 401
    assert asyncio.run(status("not-a-key")) == 401
    assert asyncio.run(status("key-b")) == 200


def test_a_user_sees_only_their_own_threads(served: str) -> None:
    async def run() -> tuple[int, list[str], list[str]]:
        a, b = client(served, "key-a"), client(served, "key-b")
        mine = await a.threads.create()
        try:
            await b.threads.get(mine["thread_id"])
            seen_by_b = 200
        except httpx.HTTPStatusError as err:
            seen_by_b = err.response.status_code
        listed_b = [t["thread_id"] for t in await b.threads.search(limit=100)]
        listed_a = [t["thread_id"] for t in await a.threads.search(limit=100)]
        return seen_by_b, listed_b, listed_a

    seen_by_b, listed_b, listed_a = asyncio.run(run())
    assert seen_by_b == 404
    assert listed_a and all(t not in listed_b for t in listed_a)


def test_an_escalation_waits_in_the_thread_state_and_resumes_over_the_api(
    served: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        api = client(served)
        thread = await api.threads.create()
        settings = context(freshwiki_kb, "reject", escalate_after=1, max_subagents=1)
        await api.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTIONS[0]},
            context=settings,
        )
        waiting = await api.threads.get_state(thread["thread_id"])
        final = await api.runs.wait(
            thread["thread_id"],
            "research",
            command={"resume": "skip"},
            context=settings,
        )
        return cast(dict[str, Any], waiting), cast(dict[str, Any], final)

    waiting, final = asyncio.run(run())
    (interrupt,) = waiting["interrupts"]
    handoff = interrupt["value"]
    assert handoff["urgency"] == "branch" and "rejected" not in handoff["reason"]
    assert "this model does not exist" in handoff["reason"]
    assert final["report"]["summary"]["escalations"] == 1


def test_a_second_run_on_a_busy_thread_waits_for_the_first(
    served: str, freshwiki_kb: str
) -> None:
    """One run per thread: a second is queued behind the first, never run beside it."""

    async def run() -> tuple[str, str]:
        api = client(served)
        thread = (await api.threads.create())["thread_id"]
        settings = context(freshwiki_kb, "hang", task_timeout_s=600)
        first, second = [
            await api.runs.create(
                thread, "research", input={"question": q}, context=settings
            )
            for q in QUESTIONS[:2]
        ]
        deadline = time.monotonic() + 60
        while (await api.runs.get(thread, first["run_id"]))["status"] == "pending":
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
        await asyncio.sleep(2)  # time enough for a second worker to take it
        statuses = [
            (await api.runs.get(thread, r["run_id"]))["status"] for r in (first, second)
        ]
        for r in (second, first):
            await api.runs.cancel(thread, r["run_id"])
        return statuses[0], statuses[1]

    first, second = asyncio.run(run())
    assert (first, second) == ("running", "pending")


def test_one_key_can_change_nothing_of_another_and_nothing_shared(
    served: str, freshwiki_kb: str
) -> None:
    async def denied(call: Any) -> bool:
        try:
            await call
        except httpx.HTTPStatusError as refused:
            return refused.response.status_code in (403, 404)
        return False

    async def run() -> None:
        a, b = client(served, "key-a"), client(served, "key-b")
        shared = (await a.assistants.search(graph_id="research"))[0]
        sid = shared["assistant_id"]
        # the deployment's assistant: everyone runs it, nobody changes it
        assert await denied(b.assistants.update(sid, context={"max_rounds": 0}))
        assert await denied(b.assistants.delete(sid))
        assert (await a.assistants.get(sid))["context"] == shared["context"]
        # an assistant of A's own: B can neither see nor change it
        own = await a.assistants.create("research", name="a-only")
        oid = own["assistant_id"]
        assert (await a.assistants.get(oid))["name"] == "a-only", "right after"
        assert await denied(b.assistants.get(oid))
        assert (await a.assistants.get(oid))["name"] == "a-only", "after b get"
        assert oid not in {x["assistant_id"] for x in await b.assistants.search()}
        assert await denied(b.assistants.update(oid, name="b-took-it"))
        assert (await a.assistants.get(oid))["name"] == "a-only", "after b update"
        assert await denied(b.assistants.delete(oid))
        assert (await a.assistants.get(oid))["name"] == "a-only"
        # threads and their runs
        thread = await a.threads.create(metadata={"secret": "a"})
        tid = thread["thread_id"]
        assert await denied(b.threads.get(tid))
        assert await denied(b.threads.update(tid, metadata={"secret": "b"}))
        assert await denied(b.runs.list(tid))
        assert await denied(
            b.runs.create(tid, "research", input={"question": QUESTIONS[0]})
        )
        assert (await a.threads.get(tid)).get("metadata") == {
            "secret": "a",
            "owner": identity_of("key-a"),
        }
        # crons
        cron = cast(
            dict[str, Any],
            await a.crons.create_for_thread(
                tid, "research", schedule="0 0 1 1 *", input={"question": QUESTIONS[0]}
            ),
        )
        cron_id = cron["cron_id"]
        assert cron_id not in {c["cron_id"] for c in await b.crons.search()}
        assert await denied(b.crons.delete(cron_id))
        assert cron_id in {c["cron_id"] for c in await a.crons.search()}
        # the store: each key has its own namespace
        notes = ["notes", uuid.uuid4().hex]  # the dev server keeps its store on disk
        await a.store.put_item(notes, "k", {"by": "a"})
        assert await b.store.get_item(notes, "k") is None
        await b.store.put_item(notes, "k", {"by": "b"})
        mine = await a.store.get_item(notes, "k")
        assert mine is not None and mine["value"] == {"by": "a"}
        # the dev server keeps what it holds on disk: leave nothing behind
        await a.crons.delete(cron_id)
        await a.assistants.delete(oid)

    asyncio.run(run())


def test_a_callers_folder_of_definitions_is_refused_unless_the_operator_allows_it(
    served: str, freshwiki_kb: str, tmp_path: Path
) -> None:
    async def run() -> dict[str, Any]:
        api = client(served)
        thread = await api.threads.create()
        output = await api.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTIONS[0]},
            context=context(freshwiki_kb, "quick", agents_dir=str(tmp_path)),
            raise_error=False,
        )
        assert isinstance(output, dict)
        return output

    error = asyncio.run(run())["__error__"]
    assert error["error"] == "ConfigError"
    assert "agents_dir is outside the folders this server allows" in error["message"]


def test_a_request_body_over_one_mebibyte_is_refused(served: str) -> None:
    huge = {"metadata": {"blob": "x" * (2 * 2**20)}}
    reply = httpx.post(
        f"{served}/threads", json=huge, headers={"x-api-key": KEYS[0]}, timeout=60
    )
    assert reply.status_code == 413
    assert "too large" in reply.text
