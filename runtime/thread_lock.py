"""One run per thread: a run holds its thread's lock until it ends.

With SQLite the lock is an exclusive `flock` on a file beside the checkpoint
store; with PostgreSQL, a session-level advisory lock. Both die with the
process that holds them, so a run killed with SIGKILL leaves no stale lock:
the next run on the thread takes it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path


class ThreadBusyError(ValueError):
    """Another process is running this thread."""


def _busy(thread_id: str) -> ThreadBusyError:
    return ThreadBusyError(
        f"thread {thread_id!r} is running in another process; wait for it to end, "
        "or use another thread"
    )


def lock_file(db: Path, thread_id: str) -> Path:
    """The lock file of a thread of the SQLite store `db`."""
    digest = hashlib.sha256(thread_id.encode()).hexdigest()[:16]
    return db.with_name(f".{db.name}.{digest}.lock")


@contextmanager
def sqlite_thread_lock(db: Path, thread_id: str) -> Iterator[None]:
    """Hold the thread's lock file, or raise ThreadBusyError at once.

    The file is removed when the run ends, so none pile up beside the store.
    A run that opened it just before then finds it gone once it holds the
    lock, and takes a new one.
    """
    path = lock_file(db, thread_id)
    while True:
        fd = _open(path, db, thread_id)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _busy(thread_id) from None
        if _still_there(fd, path):
            break
        os.close(fd)
    try:
        yield
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)


def _open(path: Path, db: Path, thread_id: str) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise OSError(
            f"cannot lock thread {thread_id!r} beside the checkpoint store {db}: "
            f"{err.strerror or err}"
        ) from err


def _still_there(fd: int, path: Path) -> bool:
    """Whether `path` is still the file `fd` holds (not removed by its last run)."""
    try:
        named = path.stat(follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


@asynccontextmanager
async def postgres_thread_lock(url: str, thread_id: str) -> AsyncIterator[None]:
    """Hold the thread's advisory lock on a connection of its own, or raise."""
    import psycopg

    key = int.from_bytes(
        hashlib.sha256(thread_id.encode()).digest()[:8], "big", signed=True
    )
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        row = await (
            await conn.execute("SELECT pg_try_advisory_lock(%s)", (key,))
        ).fetchone()
        if not row or not row[0]:
            raise _busy(thread_id)
        yield
