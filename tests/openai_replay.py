"""An OpenAI-compatible chat-completions server for tests, standard library only.

`ReplayServer` listens on 127.0.0.1 on a free port in a daemon thread and answers
`POST /v1/chat/completions` with the `Reply` its responder picks for each request
body, so the real `ChatOpenAI` client can be driven over real HTTP with recorded
replies of a real model (see `tests/data/model_replies/`) or scripted hostile ones:
error statuses, HTML or other non-JSON bodies, slow answers, a server that dies.

Example:
    with ReplayServer(by_role({"plan": Reply(content='{"direct_answer": true}')})) as s:
        model = ChatOpenAI(base_url=s.base_url, api_key="test", model="replay")
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

REPLIES_DIR = Path(__file__).parent / "data" / "model_replies"
"""Where recorded exchanges of real models are kept."""
QWEN_SAMPLE = REPLIES_DIR / "qwen2.5-0.5b-instruct.sample.jsonl"
"""Recorded exchanges of Qwen2.5-Coder-0.5B-Instruct with delegator's prompts."""

ROLE_MARKERS: dict[str, str] = {
    "plan": "You plan research",
    "enumerate": "You check a research plan",
    "write": "You write the opening of a research report",
    "subagent": "You are a research subagent",
}
"""How each role's system prompt begins; update when a prompt is reworded."""
UNKNOWN_ROLE = "unknown"
"""What `role_of` returns for a request no marker matches."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer of the server.

    Attributes:
        content: The assistant message's text, or None (e.g. with tool calls).
        tool_calls: Tool calls in OpenAI wire format (see `tool_call`), or None.
        status: The HTTP status; a non-200 status without `raw_body` sends an
            OpenAI-style error object whose message is `content`.
        raw_body: Sent verbatim instead of a chat completion (HTML, plain text,
            JSON without `choices`...).
        content_type: The Content-Type header of a `raw_body`.
        delay_s: Seconds to wait before answering.
        finish_reason: Defaults to "tool_calls" with tool calls, else "stop".
        prompt_tokens: Reported in `usage`.
        completion_tokens: Reported in `usage`.
    """

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    raw_body: str | None = None
    content_type: str = "application/json"
    delay_s: float = 0.0
    finish_reason: str | None = None
    prompt_tokens: int = 7
    completion_tokens: int = 3

    @property
    def finish(self) -> str:
        """The finish reason to report."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    @property
    def usage(self) -> dict[str, int]:
        """The `usage` object to report."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }

    def message(self) -> dict[str, Any]:
        """The assistant message in OpenAI wire format."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = self.tool_calls
        return message


Responder = Callable[[dict[str, Any]], Reply]
"""Maps a parsed chat-completions request body to the reply to send."""


class ReplayExhaustedError(LookupError):
    """A `sequence` responder asked for more replies than it was given."""


_call_ids = itertools.count(1)


def tool_call(
    name: str, arguments: Mapping[str, Any], call_id: str | None = None
) -> dict[str, Any]:
    """One tool call in OpenAI wire format (arguments as a JSON string)."""
    return {
        "id": call_id or f"call_{next(_call_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(dict(arguments))},
    }


def recorded(path: str | Path = QWEN_SAMPLE) -> list[dict[str, Any]]:
    """The recorded exchanges in a JSON-lines file, one dict a line."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def reply_from_record(record: Mapping[str, Any]) -> Reply:
    """The reply of a recorded exchange, with its recorded token usage."""
    reply = record["reply"]
    usage = record.get("usage") or {}
    return Reply(
        content=reply.get("content"),
        tool_calls=reply.get("tool_calls") or None,
        status=int(record.get("status", 200)),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
    )


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content
        )
    return ""


def role_of(body: Mapping[str, Any]) -> str:
    """Which of delegator's prompts a request answers, from its system prompt.

    Returns:
        A key of `ROLE_MARKERS`, or `UNKNOWN_ROLE`.
    """
    for message in body.get("messages", []):
        if message.get("role") not in ("system", "developer"):
            continue
        text = _text(message.get("content")).lstrip()
        for role, marker in ROLE_MARKERS.items():
            if text.startswith(marker):
                return role
    return UNKNOWN_ROLE


def sequence(*replies: Reply, repeat_last: bool = True) -> Responder:
    """A responder giving `replies` in order, whatever the request.

    Args:
        *replies: The replies, at least one.
        repeat_last: Once they run out, repeat the last one; if False, raise
            `ReplayExhaustedError` (the server then answers 500).
    """
    if not replies:
        raise ValueError("sequence needs at least one reply")
    lock = threading.Lock()
    given = 0

    def respond(body: dict[str, Any]) -> Reply:
        nonlocal given
        with lock:
            index = given
            given += 1
        if index < len(replies):
            return replies[index]
        if repeat_last:
            return replies[-1]
        raise ReplayExhaustedError(f"only {len(replies)} replies were scripted")

    return respond


def by_role(
    mapping: Mapping[str, Reply | Responder], default: Reply | Responder | None = None
) -> Responder:
    """A responder routing each request by `role_of` to a reply or responder.

    Args:
        mapping: Role to reply, or to a responder such as a `sequence`.
        default: For roles the mapping lacks; without it they raise `KeyError`
            (the server then answers 500).
    """

    def respond(body: dict[str, Any]) -> Reply:
        role = role_of(body)
        target = mapping.get(role, default)
        if target is None:
            raise KeyError(f"no reply for role {role!r}")
        return target if isinstance(target, Reply) else target(body)

    return respond


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # concurrent connects beyond the backlog stall ~1 s
    owner: ReplayServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet about clients that went away or a killed server."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output clean."""

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, add=False)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            model = self.server.owner.model
            entry = {"id": model, "object": "model", "created": 0, "owned_by": "replay"}
            self._send(200, {"object": "list", "data": [entry]})
        else:
            self._send(404, _error(f"no route GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error(f"no route POST {self.path}", "not_found"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"null")
        except json.JSONDecodeError as err:
            self._send(400, _error(f"request body is not JSON: {err}"))
            return
        if not isinstance(body, dict):
            self._send(400, _error("request body is not a JSON object"))
            return
        owner = self.server.owner
        owner._record(body)
        try:
            reply = owner.responder(body)
        except Exception as err:  # the test's responder failed: make it visible
            owner._record_error(err)
            self._send(500, _error(f"responder failed: {err!r}", "server_error"))
            return
        if reply.delay_s and owner._dead.wait(reply.delay_s):
            return  # killed while waiting: the connection is already torn down
        if reply.raw_body is not None:
            self._send_raw(reply.status, reply.raw_body.encode(), reply.content_type)
        elif reply.status != 200:
            self._send(reply.status, _error(reply.content or "scripted error"))
        elif body.get("stream"):
            self._send_stream(body, reply)
        else:
            self._send(200, owner._completion(body, reply))

    def _send(self, status: int, payload: Mapping[str, Any]) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json")

    def _send_raw(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, body: Mapping[str, Any], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for chunk in self.server.owner._chunks(body, reply):
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


class ReplayServer:
    """An OpenAI-compatible chat-completions server answering from a responder.

    Serves `POST /v1/chat/completions` (plain, or as a server-sent event stream
    when the request asks `stream: true`) and `GET /v1/models`. A responder that
    raises makes the server answer 500 and keeps the exception in `errors`.
    Leaving a `with` block kills the server.

    Example:
        with ReplayServer(sequence(Reply(content="hi"))) as server:
            ChatOpenAI(base_url=server.base_url, api_key="test", model="replay")
    """

    def __init__(self, responder: Responder, model: str = "replay") -> None:
        """Prepare a server; `start` or `with` makes it listen.

        Args:
            responder: Picks the reply for each parsed request body.
            model: The model name reported when a request names none, and by
                `GET /v1/models`.
        """
        self.responder = responder
        self.model = model
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._errors: list[Exception] = []
        self._connections: set[socket.socket] = set()
        self._dead = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The URL to give `ChatOpenAI(base_url=...)`, ending in `/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("the server is not started")
        return int(self._httpd.server_address[1])

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The chat-completions request bodies received so far, in order."""
        with self._lock:
            return list(self._requests)

    @property
    def errors(self) -> list[Exception]:
        """Exceptions the responder raised, in order."""
        with self._lock:
            return list(self._errors)

    def start(self) -> ReplayServer:
        """Listen on 127.0.0.1 on a free port, serving from a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError("the server is already started")
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=f"replay-server-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening; requests already being answered still finish."""
        httpd = self._httpd
        if httpd is None or self._thread is None:
            return
        httpd.shutdown()
        httpd.server_close()
        self._thread.join(timeout=5)

    def kill(self) -> None:
        """Die as a crashed server would.

        Closes the listening socket, so new requests get connection refused, and
        drops the connections of requests being answered, so they fail too.
        """
        self._dead.set()
        self.stop()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(body)

    def _record_error(self, err: Exception) -> None:
        with self._lock:
            self._errors.append(err)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _head(self, body: Mapping[str, Any], kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-replay-{next(self._ids)}",
            "object": kind,
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "system_fingerprint": None,
        }

    def _completion(self, body: Mapping[str, Any], reply: Reply) -> dict[str, Any]:
        choice = {
            "index": 0,
            "message": reply.message(),
            "finish_reason": reply.finish,
            "logprobs": None,
        }
        head = self._head(body, "chat.completion")
        return {**head, "choices": [choice], "usage": reply.usage}

    def _chunks(
        self, body: Mapping[str, Any], reply: Reply
    ) -> Iterator[dict[str, Any]]:
        head = self._head(body, "chat.completion.chunk")
        delta: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            delta["tool_calls"] = [
                {"index": i, **call} for i, call in enumerate(reply.tool_calls)
            ]
        yield {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        done = {"index": 0, "delta": {}, "finish_reason": reply.finish}
        yield {**head, "choices": [done]}
        if (body.get("stream_options") or {}).get("include_usage"):
            yield {**head, "choices": [], "usage": reply.usage}
