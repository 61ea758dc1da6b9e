"""`delegator serve`: the graphs behind the LangGraph Server API, offline-safe.

It runs `langgraph dev` on this project's langgraph.json with no browser, no
reloading, no analytics and no version check, on a chosen port, with enough
concurrent jobs that one slow run holds no other back.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import NoReturn

from runtime.kb import PROJECT_ROOT

CONFIG = PROJECT_ROOT / "langgraph.json"
OFFLINE = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "LANGSMITH_TRACING": "false",
}


class ServeError(RuntimeError):
    """The server cannot be started here."""


def server_command(port: int, host: str, jobs: int) -> list[str]:
    """The `langgraph dev` command line that serves the graphs."""
    if not 0 < port < 65536:
        raise ServeError(f"port {port} is not a port number")
    if jobs < 1:
        raise ServeError("--jobs must be at least 1")
    here = Path(sys.executable).parent / "langgraph"
    langgraph = str(here) if here.exists() else shutil.which("langgraph")
    if langgraph is None:
        raise ServeError(
            "langgraph-cli is not installed: pip install 'delegator[serve]'"
        )
    return [
        langgraph,
        "dev",
        "--config",
        str(CONFIG),
        "--host",
        host,
        "--port",
        str(port),
        "--n-jobs-per-worker",
        str(jobs),
        "--no-browser",
        "--no-reload",
    ]


def serve(port: int, host: str, jobs: int) -> NoReturn:
    """Replace this process with the server (its signals and exit code are ours)."""
    command = server_command(port, host, jobs)
    environment = {**OFFLINE, **os.environ}
    os.chdir(PROJECT_ROOT)
    os.execve(command[0], command, environment)
