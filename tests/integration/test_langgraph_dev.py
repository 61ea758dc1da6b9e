"""The research graph behind a real `langgraph dev` server, over HTTP."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph_sdk import get_client

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which natural disasters and severe weather events struck in 2022 and 2023?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "langgraph-dev.log"
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
    }
    langgraph = Path(sys.executable).parent / "langgraph"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(langgraph), "dev", "--no-browser", "--no-reload", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"langgraph dev exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"langgraph dev did not start:\n{log.read_text()[-3000:]}"
                    )
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    logged = log.read_text()
    assert "BlockingError" not in logged
    assert "unregistered type" not in logged


def extractive(kb: str, **extra: Any) -> dict[str, Any]:
    return {
        "lead_model": "extractive",
        "subagent_model": "extractive",
        "kb_path": kb,
        **extra,
    }


def test_research_graph_is_served_with_its_schemas(server: str) -> None:
    async def check() -> None:
        client = get_client(url=server)
        [assistant] = await client.assistants.search(graph_id="research")
        schemas = await client.assistants.get_schemas(assistant["assistant_id"])
        assert schemas["input_schema"] and schemas["context_schema"]
        assert list(schemas["input_schema"]["properties"]) == ["question"]
        context = schemas["context_schema"]["properties"]
        assert {"lead_model", "subagent_model", "max_rounds", "kb_path"} <= set(context)
        assert all(field.get("description") for field in context.values())

    asyncio.run(check())


def test_run_streams_events_and_ends_with_a_cited_report(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        custom = []
        async for part in client.runs.stream(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context=extractive(freshwiki_kb, max_rounds=1),
            stream_mode=["custom"],
        ):
            if part.event == "custom":
                custom.append(part.data)
        state = await client.threads.get_state(thread["thread_id"])
        return custom, cast(dict[str, Any], state["values"])

    custom, values = asyncio.run(run())
    kinds = [e["event"] for e in custom]
    assert kinds.count("DELEGATE") == kinds.count("RESULT") == len(values["results"])
    assert "messages" not in values
    report = values["report"]
    assert report["coverage_table"] and report["citations"]
    assert "[1]" in report["markdown"]
    assert [g["round"] for g in values["coverage"]] == [0, 1]


def test_bad_question_fails_the_run_with_a_clear_error(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[Any, Any]:
        client = get_client(url=server)
        thread = await client.threads.create()
        output = await client.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": "   "},
            context=extractive(freshwiki_kb),
            raise_error=False,
        )
        [last] = await client.runs.list(thread["thread_id"], limit=1)
        return output, last

    output, last = asyncio.run(run())
    assert last["status"] == "error"
    assert output["__error__"]["error"] == "QuestionError"
    assert "question is empty" in output["__error__"]["message"]


def test_a_paused_thread_resumes_with_its_state_deserialized_strictly(
    server: str, freshwiki_kb: str
) -> None:
    # the server runs with LANGGRAPH_STRICT_MSGPACK=true (tests/conftest.py):
    # resuming reads every result, finding and plan back from the checkpoint
    assert os.environ["LANGGRAPH_STRICT_MSGPACK"] == "true"

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        context = extractive(freshwiki_kb, max_rounds=1)
        await client.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context=context,
            interrupt_after=["aggregate"],
        )
        paused = await client.threads.get_state(thread["thread_id"])
        final = await client.runs.wait(
            thread["thread_id"], "research", input=None, context=context
        )
        return cast(dict[str, Any], paused), cast(dict[str, Any], final)

    paused, final = asyncio.run(run())
    assert paused["next"] == ["verify"]
    assert paused["values"]["results"] and not paused["values"].get("report")
    assert final["report"]["coverage_table"]
    assert set(final["results"]) >= set(paused["values"]["results"])
    assert [g["round"] for g in final["coverage"]] == [0, 1]
