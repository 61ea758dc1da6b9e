"""A model endpoint cannot send a compressed reply or one past the cap."""

from __future__ import annotations

import asyncio
import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest

from runtime.models import ModelSettings, load_chat_model
from runtime.replies import BoundedTransport, ReplyRefusedError, bounded_client

BOMB = gzip.compress(b"0" * 2**20)


class Hostile(BaseHTTPRequestHandler):
    """`/gzip` answers compressed whatever was asked; `/big` answers 64 KiB."""

    asked_encoding: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        Hostile.asked_encoding.append(self.headers.get("Accept-Encoding", ""))
        body = BOMB if self.path == "/gzip" else b"x" * 65536
        self.send_response(200)
        if self.path == "/gzip":
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.fixture
def hostile() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), Hostile)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_a_compressed_reply_is_refused_and_none_was_asked(hostile: str) -> None:
    async def fetch() -> None:
        async with bounded_client(10) as client:
            await client.get(f"{hostile}/gzip")

    with pytest.raises(ReplyRefusedError, match="compressed"):
        asyncio.run(fetch())
    assert Hostile.asked_encoding[-1] == "identity"


def test_a_reply_past_the_cap_is_refused(hostile: str) -> None:
    async def fetch() -> None:
        transport = BoundedTransport(limit=4096)
        async with httpx_client(transport) as client:
            await client.get(f"{hostile}/big")

    with pytest.raises(ReplyRefusedError, match="larger than 4,096 bytes"):
        asyncio.run(fetch())


def httpx_client(transport: BoundedTransport) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=transport)


def test_model_calls_go_through_the_bounded_transport() -> None:
    settings = ModelSettings(spec="openai:m", role="subagent", base_url="http://x")
    model = load_chat_model(settings)
    client = getattr(model, "http_async_client", None)
    assert client is not None
    assert isinstance(client._transport, BoundedTransport)
