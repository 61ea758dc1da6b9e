"""Which files a caller may name: the folders an operator allows.

A server sets `DELEGATOR_KB_DIRS`, `DELEGATOR_AGENT_DIRS` and
`DELEGATOR_MODEL_DIRS` (folders separated by the OS path separator). On a
server (`DELEGATOR_SERVER`, which langgraph.json sets) a list left unset
allows nothing: a caller names no path the operator did not allow. A path is
judged before anything looks at it, so a refusal says nothing about whether
the file exists.
"""

from __future__ import annotations

import os
from pathlib import Path

SERVER_ENV = "DELEGATOR_SERVER"
"""Set (to "true") in the server's environment by langgraph.json."""


def on_server() -> bool:
    """Whether this process serves the graphs to callers."""
    return os.environ.get(SERVER_ENV, "").strip().lower() in ("1", "true", "yes")


def allowed(path: str, env_name: str) -> bool:
    """Whether `path` lies in a folder `env_name` names.

    With none named: any path from the command line, none on a server.
    """
    folders = [d for d in os.environ.get(env_name, "").split(os.pathsep) if d]
    if not folders:
        return not on_server()
    target = Path(path).expanduser().resolve()
    return any(target.is_relative_to(Path(d).expanduser().resolve()) for d in folders)
