"""A throwaway PostgreSQL server, started by the tests (and the benchmarks).

`throwaway_server` runs `initdb` and `pg_ctl` from Debian's `postgresql`
package on a free port of 127.0.0.1 and stops the server when its block ends;
the `postgres_url` fixture keeps one for the whole test session.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

INSTALL_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) were not found: install the "
    "'postgresql' package (e.g. `apt-get install postgresql`)"
)
STARTUP_TIMEOUT = 30.0


def _version_key(bin_dir: str) -> tuple[int, ...]:
    """Sort key for `/usr/lib/postgresql/<version>/bin` by numeric version."""
    version = Path(bin_dir).parent.name
    return tuple(int(part) for part in re.findall(r"\d+", version))


def find_bin_dir() -> Path:
    """The directory holding `initdb` and `pg_ctl`, highest Debian version first.

    Raises:
        RuntimeError: If no PostgreSQL server binaries are installed.
    """
    candidates = [
        os.path.dirname(path)
        for path in glob.glob("/usr/lib/postgresql/*/bin/initdb")
        if os.access(os.path.join(os.path.dirname(path), "pg_ctl"), os.X_OK)
    ]
    if candidates:
        return Path(max(candidates, key=_version_key))
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl and Path(initdb).parent == Path(pg_ctl).parent:
        return Path(initdb).parent
    raise RuntimeError(INSTALL_HINT)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_postgres_user() -> tuple[list[str], pwd.struct_passwd | None]:
    """A command prefix and account to run server tools as (initdb refuses root)."""
    if os.geteuid() != 0:
        return [], None
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError(
            "running as root, but there is no 'postgres' system user to run "
            "initdb as: install the 'postgresql' package"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise RuntimeError("running as root, but `runuser` (util-linux) is missing")
    return [runuser, "-u", "postgres", "--"], account


def _run(prefix: list[str], args: list[str], cwd: Path) -> None:
    """Run a server tool, raising with its output if it fails."""
    done = subprocess.run(
        [*prefix, *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )


def _wait_until_ready(url: str, log: Path) -> None:
    """Poll the server until it accepts a connection, or raise after a deadline."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError as error:
            if time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(
                    f"PostgreSQL did not accept connections within "
                    f"{STARTUP_TIMEOUT:.0f}s: {error}\n{tail}"
                ) from error
            time.sleep(0.2)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A URL to a fresh PostgreSQL server that lives for the whole session."""
    with throwaway_server() as url:
        yield url


@contextmanager
def throwaway_server() -> Iterator[str]:
    """A URL to a fresh PostgreSQL server (user `postgres`, trust auth, no fsync).

    The server lives in a temporary directory under /tmp (short enough for its
    Unix socket, reachable by the `postgres` user when run as root); it is
    stopped, and the directory removed, when the block ends.

    Raises:
        RuntimeError: The server binaries are missing or it does not start.
    """
    bin_dir = find_bin_dir()
    prefix, account = _as_postgres_user()
    base = Path(tempfile.mkdtemp(prefix="delegator-postgres-", dir="/tmp"))
    base.chmod(0o755)
    data, sockets, log = base / "data", base / "sockets", base / "server.log"
    sockets.mkdir()
    if account is not None:
        for path in (base, sockets):
            os.chown(path, account.pw_uid, account.pw_gid)
    port = free_port()
    pg_ctl = str(bin_dir / "pg_ctl")
    options = (
        f"-p {port} -c listen_addresses=127.0.0.1 "
        f"-c unix_socket_directories={sockets} -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    started = False
    try:
        _run(
            prefix,
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            cwd=base,
        )
        started = True
        _run(
            prefix,
            [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"],
            cwd=base,
        )
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
