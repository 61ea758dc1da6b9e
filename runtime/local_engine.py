"""`local:<path.gguf>`: llama.cpp in-process, serving the OpenAI API on loopback.

The optional extra `xllamacpp` runs llama.cpp's own HTTP server inside this
process: started once per model file on a free loopback port, it serves the
OpenAI API that `ChatOpenAI` then calls like any endpoint. Threads, context
size and parallel slots come from `DELEGATOR_LOCAL_THREADS`,
`DELEGATOR_LOCAL_CONTEXT` and `DELEGATOR_LOCAL_SLOTS` (the context is shared
by the slots). The server stops at exit, once no request is in flight; the
CLI stops it itself as it exits (`stop_engines`).
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from langchain_core.tracers.langchain import wait_for_all_tracers

from runtime.paths import allowed

GGUF_MAGIC = b"GGUF"
READY_TIMEOUT_S = 120.0
DRAIN_TIMEOUT_S = 60.0


class LocalModelError(ValueError):
    """A `local:` model that cannot run: a missing or invalid file, no engine."""


MODEL_DIRS_ENV = "DELEGATOR_MODEL_DIRS"
"""Folders a `local:` model file must lie in, if set (see `runtime.paths`)."""


def check_gguf(path: str) -> Path:
    """The model file, resolved, if it is allowed, exists and is a GGUF file."""
    if not allowed(path, MODEL_DIRS_ENV, follow_links=True):
        raise LocalModelError(
            "the model file is outside the folders this server allows"
        )
    return _gguf(path)


@functools.lru_cache(maxsize=32)
def _gguf(path: str) -> Path:
    file = Path(path).expanduser()
    if not file.is_file():
        raise LocalModelError(f"no model file at {file}")
    with file.open("rb") as fh:
        if fh.read(4) != GGUF_MAGIC:
            raise LocalModelError(f"{file} is not a GGUF model file")
    return file.resolve()


def setting(name: str, default: int) -> int:
    """A positive whole number from `DELEGATOR_LOCAL_<NAME>`, else `default`."""
    raw = os.environ.get(f"DELEGATOR_LOCAL_{name}", "")
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise LocalModelError(f"DELEGATOR_LOCAL_{name}={raw!r} is not a whole number")
    return int(raw)


class LocalEngine:
    """One llama.cpp server for one model file, on a loopback port."""

    def __init__(self, model: Path, *, threads: int, context: int, slots: int):
        try:
            import xllamacpp
        except ImportError as err:
            raise LocalModelError(
                "local: models need llama.cpp: pip install 'delegator[local]'"
            ) from err
        params = xllamacpp.CommonParams()
        params.model.path = str(model)
        params.n_ctx = context
        params.n_parallel = slots
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # the server binds a free port itself
        params.use_jinja = True  # the model's own chat template, tool calls too
        params.verbosity = 1  # errors only
        try:
            self._server: Any = xllamacpp.Server(params)  # returns once listening
        except (RuntimeError, ValueError) as err:
            raise LocalModelError(f"llama.cpp could not load {model}: {err}") from err
        self.root = str(self._server.listening_address).rstrip("/")
        self.base_url = self.root + "/v1"
        self._wait_until_ready()

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(self.root + path, timeout=5) as answer:
            return json.loads(answer.read())

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if self._get("/health").get("status") == "ok":
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass  # still loading
            time.sleep(0.1)
        raise LocalModelError(f"llama.cpp at {self.root} not ready in time")

    def busy(self) -> bool:
        """Whether a slot is still generating."""
        try:
            return any(slot.get("is_processing") for slot in self._get("/slots"))
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def stop(self) -> None:
        """Stop the server once no request is in flight.

        llama.cpp stops when its server object is released, and waits for every
        client to hang up: released mid-request from this process, it would
        block forever. So it waits for idle slots; a server still busy after
        `DRAIN_TIMEOUT_S` is left to the end of the process instead.
        """
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while self.busy() and time.monotonic() < deadline:
            time.sleep(0.2)
        if self.busy():
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(self._server))
        self._server = None


_starting = threading.Lock()
_started: list[LocalEngine] = []


@functools.cache
def _engine(model: Path, threads: int, context: int, slots: int) -> LocalEngine:
    engine = LocalEngine(model, threads=threads, context=context, slots=slots)
    atexit.register(engine.stop)
    _started.append(engine)
    return engine


def stop_engines(exit_code: int) -> None:
    """Stop this process's engines as it exits with `exit_code`: call it last.

    An idle engine is released. One still answering a request (one its client
    gave up on: a timeout) can neither be released, which blocks until the
    request ends, nor be left running into interpreter shutdown, where its
    threads outlive the library's static data and crash the process (exit
    139 after a finished run). The process then ends here, its output and
    traces flushed, with `exit_code`.
    """
    while _started:
        engine = _started.pop()
        if engine.busy():
            wait_for_all_tracers()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(exit_code)
        engine.stop()
    _engine.cache_clear()


def slots() -> int:
    """Requests a local engine serves at once (`DELEGATOR_LOCAL_SLOTS`, default 1).

    On a few cores more slots add no speed: they split it, and each request
    then runs longer against its timeout.
    """
    return setting("SLOTS", 1)


def local_base_url(path: str) -> str:
    """The OpenAI base URL of the engine serving `path`, started on first use."""
    model = check_gguf(path)
    threads = setting("THREADS", os.cpu_count() or 1)
    with _starting:
        engine = _engine(model, threads, setting("CONTEXT", 16384), slots())
    return engine.base_url
