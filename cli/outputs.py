"""Outputs own only what they create: checked against every input, written safely.

An output (`--out`, `--json`, `--html`, a result page) may not be an input (the
knowledge base, the checkpoint store, agent definitions, a plan, an MCP
configuration) nor another output, by resolved path or by inode; it may not be
a symbolic link, nor an existing file that is not a regular one (a device, a
FIFO, a folder): those are refused with one line, never replaced. A regular
file is replaced atomically (a temporary file beside it, renamed over it) and
keeps its mode; a new one gets the mode the umask gives.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path


class OutputPathError(ValueError):
    """An output path that would replace something it does not own."""


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of what `path` names, following links; None if nothing."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


def check_outputs(outputs: Iterable[Path], inputs: Iterable[Path | str]) -> None:
    """Refuse an output that is an input, another output, a link or a special file.

    Raises:
        OutputPathError: naming the output and why.
    """
    taken: dict[object, str] = {}
    for given in inputs:
        path = Path(given).expanduser()
        if path.is_dir():
            taken |= {_identity(p): str(p) for p in path.rglob("*") if p.is_file()}
        taken[path.resolve()] = str(path)
        taken[_identity(path)] = str(path)
    taken.pop(None, None)
    for output in outputs:
        path = output.expanduser()
        if path.is_symlink():
            raise OutputPathError(f"{output} is a symbolic link; name the file itself")
        mode = path.lstat().st_mode if path.exists() else None
        if mode is not None and not stat.S_ISREG(mode):
            raise OutputPathError(
                f"{output} exists and is not a regular file (a device, FIFO or "
                "folder); choose another output"
            )
        for key in (path.resolve(), _identity(path)):
            if key is not None and key in taken:
                same = "" if taken[key] == str(output) else f" (as {taken[key]})"
                raise OutputPathError(
                    f"{output} is an input or another output of this run{same}; "
                    "choose another output"
                )
        taken[path.resolve()] = str(output)
        if (identity := _identity(path)) is not None:
            taken[identity] = str(output)


def _umask_mode() -> int:
    """The mode a new file gets under the process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`.

    A reader sees the old file or the new one, never half of one. The file
    keeps the mode it had, or gets the one the umask gives.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else _umask_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
