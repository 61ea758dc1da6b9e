"""One run per thread of a SQLite store: a lock file that leaves nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import thread_lock
from runtime.thread_lock import ThreadBusyError, lock_file, sqlite_thread_lock


def test_a_thread_is_locked_while_it_runs_and_its_file_goes_with_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "runs.sqlite"
    with sqlite_thread_lock(db, "t1"):
        assert lock_file(db, "t1").exists()
        with pytest.raises(ThreadBusyError, match="running in another process"):
            with sqlite_thread_lock(db, "t1"):
                pass
        with sqlite_thread_lock(db, "t2"):
            pass
    assert list(tmp_path.iterdir()) == []


def test_a_lock_file_removed_before_it_was_locked_is_taken_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.sqlite"
    opened: list[int] = []
    real = thread_lock._open

    def racing(path: Path, store: Path, thread_id: str) -> int:
        fd = real(path, store, thread_id)
        if not opened:
            path.unlink()  # the run that held it ended meanwhile
        opened.append(fd)
        return fd

    monkeypatch.setattr(thread_lock, "_open", racing)
    with sqlite_thread_lock(db, "t1"):
        assert len(opened) == 2 and lock_file(db, "t1").exists()
        monkeypatch.setattr(thread_lock, "_open", real)
        with pytest.raises(ThreadBusyError):
            with sqlite_thread_lock(db, "t1"):
                pass
    assert not lock_file(db, "t1").exists()
