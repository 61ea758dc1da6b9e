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
import stat
from pathlib import Path

SERVER_ENV = "DELEGATOR_SERVER"
"""Set (to "true") in the server's environment by langgraph.json."""


def on_server() -> bool:
    """Whether this process serves the graphs to callers."""
    return os.environ.get(SERVER_ENV, "").strip().lower() in ("1", "true", "yes")


def allowed(path: str, env_name: str, *, follow_links: bool = False) -> bool:
    """Whether `path` lies in a folder `env_name` names.

    With none named: any path from the command line, none on a server. By
    default the judgement is by the path as written, made absolute, touching
    no file (a server's event loop may not block); `follow_links` judges where
    links lead too, and belongs in a worker thread, before the file is opened.
    """
    folders = [d for d in os.environ.get(env_name, "").split(os.pathsep) if d]
    if not folders:
        return not on_server()

    def where(name: str) -> Path:
        expanded = os.path.expanduser(name)
        if follow_links:
            return Path(os.path.realpath(expanded))
        return Path(os.path.normpath(os.path.abspath(expanded)))

    target = where(path)
    return any(target.is_relative_to(where(d)) for d in folders)


class InputFileError(ValueError):
    """An input file that cannot be read as one: its message says why."""


def read_input(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes.

    A FIFO or device is never opened (a read could wait forever); a larger
    file is refused unread.

    Raises:
        InputFileError: naming the file and why.
    """
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise InputFileError(f"{path} is not a regular file")
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as err:
        raise InputFileError(f"{path} cannot be read: {err.strerror or err}") from err
    if len(data) > limit:
        raise InputFileError(f"{path} is larger than {limit:,} bytes")
    return data
