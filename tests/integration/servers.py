"""Starting a real LangGraph server for a test, and watching what it connects to."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.connections import Watch

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running server: its URL, log and connection watch."""

    url: str
    log: Path
    watch: Watch
    process: subprocess.Popen[bytes]


@contextmanager
def running(command: list[str], env: dict[str, str], log: Path) -> Iterator[Server]:
    """Start a server command on a free loopback port; stop it afterwards.

    `command` holds `{port}`, filled in here. The server must make no
    connection outside this machine while it runs. Its checkpoints go to
    server.sqlite beside the log unless `env` names DELEGATOR_SERVER_DB.
    """
    port = free_port()
    argv = [part.format(port=port) for part in command]
    with log.open("w") as out:
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={
                **os.environ,
                **OFFLINE,
                "DELEGATOR_SERVER_DB": str(log.parent / "server.sqlite"),
                **env,
            },
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    watch = Watch(proc.pid)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{url}/ok", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the server did not start:\n{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.5)
        yield Server(url, log, watch, proc)
    finally:
        outside = watch.outside()
        proc.terminate()
        proc.wait(timeout=30)
    assert not outside, f"the server connected outside this machine: {outside}"
    logged = log.read_text()
    assert "BlockingError" not in logged
    assert "unregistered type" not in logged
