"""The replay server speaks enough OpenAI for the real ChatOpenAI client."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from typing import Any

import anyio
import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_openai import ChatOpenAI

from tests.openai_replay import (
    QWEN_SAMPLE,
    ROLE_MARKERS,
    UNKNOWN_ROLE,
    ReplayServer,
    Reply,
    by_role,
    recorded,
    reply_from_record,
    role_of,
    sequence,
    tool_call,
)

RECORDS = recorded(QWEN_SAMPLE)
# One connection pool for every test: building one loads the CA bundle (~0.1 s).
HTTP, ASYNC_HTTP = openai.DefaultHttpxClient(), openai.DefaultAsyncHttpxClient()


def chat(server: ReplayServer, **settings: Any) -> ChatOpenAI:
    """The project's kind of client, pointed at the replay server."""
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="test",
        model="replay",
        max_retries=0,
        http_client=HTTP,
        http_async_client=ASYNC_HTTP,
        **settings,
    )


def first(role: str, marker: str = "") -> dict[str, Any]:
    """The first kept exchange of `role` whose reply contains `marker`."""
    return next(
        r
        for r in RECORDS
        if r["role"] == role and marker in (r["reply"]["content"] or "")
    )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_plain_reply_round_trips_with_usage() -> None:
    reply = Reply(content="Floods struck [1].", prompt_tokens=11, completion_tokens=4)
    with ReplayServer(sequence(reply)) as server:
        answer = chat(server).invoke("Which floods struck in 2022?")

    assert isinstance(answer, AIMessage)
    assert answer.content == "Floods struck [1]."
    assert answer.tool_calls == []
    assert answer.response_metadata["finish_reason"] == "stop"
    assert answer.usage_metadata is not None
    assert answer.usage_metadata["input_tokens"] == 11
    assert answer.usage_metadata["output_tokens"] == 4
    assert answer.usage_metadata["total_tokens"] == 15


def test_requests_are_recorded_with_their_messages() -> None:
    with ReplayServer(sequence(Reply(content="one"), Reply(content="two"))) as server:
        model = chat(server, temperature=0)
        one = model.invoke([("system", "Be brief."), ("user", "first")])
        two = model.invoke("second")
        bodies = server.requests

    assert (one.content, two.content) == ("one", "two")
    assert len(bodies) == 2
    assert bodies[0]["model"] == "replay"
    assert bodies[0]["temperature"] == 0
    assert bodies[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first"},
    ]
    assert bodies[1]["messages"] == [{"role": "user", "content": "second"}]


def test_recorded_exchange_replays_verbatim() -> None:
    record = first("plan", '"direct_answer": true')
    with ReplayServer(sequence(reply_from_record(record))) as server:
        answer = chat(server, temperature=0).invoke(record["request"]["messages"])
        sent = server.requests[0]

    assert answer.content == record["reply"]["content"]
    assert answer.usage_metadata is not None
    usage = record["usage"]
    assert answer.usage_metadata["input_tokens"] == usage["prompt_tokens"]
    assert answer.usage_metadata["output_tokens"] == usage["completion_tokens"]
    # ChatOpenAI sends the recorded messages as they were recorded.
    assert sent["messages"] == record["request"]["messages"]


def test_recorded_tool_calls_come_back_as_tool_calls() -> None:
    subagent = next(r for r in RECORDS if r["request"].get("tools"))
    calls = [
        tool_call("search", {"query": "2022 AFL Grand Final", "k": 3}, "call_a"),
        tool_call("read", {"passage_id": "2022_AFL_Grand_Final#2"}, "call_b"),
    ]
    record = {**subagent, "reply": {"content": None, "tool_calls": calls}}
    with ReplayServer(sequence(reply_from_record(record))) as server:
        model = chat(server).bind_tools(subagent["request"]["tools"])
        answer = model.invoke(subagent["request"]["messages"])
        sent = server.requests[0]

    assert isinstance(answer, AIMessage)
    assert answer.tool_calls == [
        {
            "name": "search",
            "args": {"query": "2022 AFL Grand Final", "k": 3},
            "id": "call_a",
            "type": "tool_call",
        },
        {
            "name": "read",
            "args": {"passage_id": "2022_AFL_Grand_Final#2"},
            "id": "call_b",
            "type": "tool_call",
        },
    ]
    assert answer.response_metadata["finish_reason"] == "tool_calls"
    assert [t["function"]["name"] for t in sent["tools"]] == ["search", "read"]


def test_tool_call_written_as_text_stays_text() -> None:
    text = '```json\n{"name": "search", "arguments": {"query": "floods"}}\n```'
    with ReplayServer(sequence(Reply(content=text))) as server:
        answer = chat(server).invoke("Find floods.")

    assert isinstance(answer, AIMessage)
    assert answer.tool_calls == []
    assert answer.content == text


def test_streaming_sends_one_chunk_then_done() -> None:
    reply = Reply(content="Partial", tool_calls=[tool_call("search", {"query": "q"})])
    with ReplayServer(sequence(reply)) as server:
        chunks = list(chat(server, stream_usage=True).stream("go"))
        sent = server.requests[0]

    assert sent["stream"] is True
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged = merged + chunk
    assert isinstance(merged, AIMessageChunk)
    assert merged.content == "Partial"
    assert [c["name"] for c in merged.tool_calls] == ["search"]
    assert merged.tool_calls[0]["args"] == {"query": "q"}
    assert merged.response_metadata["finish_reason"] == "tool_calls"
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["total_tokens"] == 10


def test_html_body_with_status_200_raises() -> None:
    page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    with ReplayServer(sequence(Reply(raw_body=page, content_type="text/html"))) as s:
        with pytest.raises(ValueError, match="Unexpected response type"):
            chat(s).invoke("hi")


def test_json_without_choices_raises() -> None:
    body = json.dumps({"object": "chat.completion", "model": "replay"})
    with ReplayServer(sequence(Reply(raw_body=body))) as server:
        with pytest.raises(TypeError, match="null value for 'choices'"):
            chat(server).invoke("hi")


def test_error_status_raises_the_matching_openai_error() -> None:
    replies = sequence(
        Reply(status=429, content="slow down"), Reply(status=500, content="boom")
    )
    with ReplayServer(replies) as server:
        with pytest.raises(openai.RateLimitError, match="slow down"):
            chat(server).invoke("hi")
        with pytest.raises(openai.InternalServerError, match="boom"):
            chat(server).invoke("hi")


def test_slow_reply_times_the_client_out() -> None:
    with ReplayServer(sequence(Reply(content="late", delay_s=3))) as server:
        started = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            chat(server, timeout=0.2).invoke("hi")
    assert time.monotonic() - started < 2


def test_kill_refuses_later_requests() -> None:
    with ReplayServer(sequence(Reply(content="alive"))) as server:
        model = chat(server)
        assert model.invoke("hi").content == "alive"
        port = server.port
        server.kill()
        with pytest.raises(openai.APIConnectionError):
            model.invoke("hi again")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        assert len(server.requests) == 1


@pytest.mark.parametrize("stuck_in", ["delay", "responder"])
def test_kill_drops_a_request_being_answered(stuck_in: str) -> None:
    arrived, release = threading.Event(), threading.Event()

    def slow(body: dict[str, Any]) -> Reply:
        arrived.set()
        if stuck_in == "delay":
            return Reply(content="too late", delay_s=3)
        release.wait(3)
        return Reply(content="too late")

    with ReplayServer(slow) as server:

        def kill_once_arrived() -> None:
            if arrived.wait(5):
                server.kill()

        killer = threading.Thread(target=kill_once_arrived)
        killer.start()
        model = chat(server, timeout=10)
        started = time.monotonic()
        try:
            with pytest.raises(openai.APIConnectionError):
                model.invoke("hi")
        finally:
            release.set()
            killer.join()
    assert arrived.is_set()
    assert time.monotonic() - started < 2


def test_exhausted_sequence_answers_500_and_keeps_the_error() -> None:
    with ReplayServer(sequence(Reply(content="once"), repeat_last=False)) as server:
        model = chat(server)
        assert model.invoke("a").content == "once"
        with pytest.raises(openai.InternalServerError, match="ReplayExhaustedError"):
            model.invoke("b")
        assert len(server.errors) == 1


def test_models_endpoint_lists_the_model() -> None:
    with ReplayServer(sequence(Reply(content="x")), model="qwen-replay") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="t", http_client=HTTP)
        assert [m.id for m in client.models.list()] == ["qwen-replay"]


def test_role_of_recognises_every_kept_exchange() -> None:
    assert 10 <= len(RECORDS) <= 16
    assert {role_of(r["request"]) for r in RECORDS} == set(ROLE_MARKERS)
    for record in RECORDS:
        assert role_of(record["request"]) == record["role"]
    assert role_of({"messages": [{"role": "user", "content": "hi"}]}) == UNKNOWN_ROLE


def test_by_role_routes_recorded_replies() -> None:
    plan, write = first("plan"), first("write")
    responder = by_role(
        {"plan": reply_from_record(plan), "write": sequence(reply_from_record(write))},
        default=Reply(content="other"),
    )
    with ReplayServer(responder) as server:
        model = chat(server)
        contents = [
            model.invoke(write["request"]["messages"]).content,
            model.invoke(plan["request"]["messages"]).content,
            model.invoke("no system prompt").content,
        ]
        roles = [role_of(body) for body in server.requests]

    assert contents == [write["reply"]["content"], plan["reply"]["content"], "other"]
    assert roles == ["write", "plan", UNKNOWN_ROLE]


@pytest.mark.anyio
async def test_concurrent_async_calls_are_all_recorded() -> None:
    texts = {f"q{i}" for i in range(8)}
    answers: list[str] = []

    def echo(body: dict[str, Any]) -> Reply:
        return Reply(content="re: " + body["messages"][-1]["content"], delay_s=0.05)

    with ReplayServer(echo) as server:
        model = chat(server)

        async def ask(text: str) -> None:
            answers.append(str((await model.ainvoke(text)).content))

        async with anyio.create_task_group() as group:
            for text in texts:
                group.start_soon(ask, text)
        bodies = server.requests

    assert sorted(answers) == sorted(f"re: {t}" for t in texts)
    assert Counter(b["messages"][-1]["content"] for b in bodies) == Counter(texts)
    assert all(b["stream"] is False for b in bodies)
