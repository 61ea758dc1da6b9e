"""A throwaway PostgreSQL server for the checkpointer benchmark.

It reuses the helpers of the test suite's fixture (`tests.postgres`): initdb
and pg_ctl on a free loopback port, as the `postgres` user when run as root.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A URL to a fresh server, stopped and removed when the block ends.

    Raises:
        RuntimeError: The server binaries are missing or it does not start.
    """
    from tests.postgres import (
        _as_postgres_user,
        _run,
        _wait_until_ready,
        find_bin_dir,
        free_port,
    )

    bin_dir = find_bin_dir()
    prefix, account = _as_postgres_user()
    base = Path(tempfile.mkdtemp(prefix="bench-postgres-", dir="/tmp"))
    base.chmod(0o755)
    data, sockets, log = base / "data", base / "sockets", base / "server.log"
    sockets.mkdir()
    if account is not None:
        for path in (base, sockets):
            shutil.chown(path, account.pw_uid, account.pw_gid)
    port = free_port()
    pg_ctl = str(bin_dir / "pg_ctl")
    options = (
        f"-p {port} -c listen_addresses=127.0.0.1 "
        f"-c unix_socket_directories={sockets} -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres"]
    initdb += ["-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]
    started = False
    try:
        _run(prefix, initdb, cwd=base)
        started = True
        start = [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"]
        _run(prefix, start, cwd=base)
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres?sslmode=disable"
        _wait_until_ready(url, log)
        yield url
    finally:
        if started:
            subprocess.run(
                [*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                cwd=base,
                capture_output=True,
                check=False,
            )
        shutil.rmtree(base, ignore_errors=True)
