"""Where the CLI's runs are checkpointed: SQLite by default, PostgreSQL by URL.

Every superstep's checkpoint and every finished task's writes are saved, so a
run stopped by Ctrl-C, a crash or an escalation resumes from its thread without
running a finished subagent again.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from runtime.context import ConfigError
from runtime.kb import PROJECT_ROOT

RUNS_DB_ENV = "DELEGATOR_RUNS_DB"
DEFAULT_RUNS_DB = Path(
    os.environ.get(RUNS_DB_ENV) or PROJECT_ROOT / "data" / "runs.sqlite"
)
"""The CLI's checkpoint file: `DELEGATOR_RUNS_DB`, else data/runs.sqlite."""
POSTGRES_SCHEMES = ("postgres://", "postgresql://")
RUNS_APPLICATION_ID = 0x444C4752
"""`PRAGMA application_id` of a delegator checkpoint store: "DLGR" in ASCII."""
LANGGRAPH_TABLES = frozenset({"checkpoints", "writes"})
"""The tables LangGraph's SQLite checkpointer creates."""


def claim_store(db: Path) -> None:
    """Mark a new checkpoint file as delegator's; refuse one that is not.

    A file with content must carry the marker, or hold nothing but LangGraph's
    checkpoint tables (a store written before the marker existed, which is
    marked then): a knowledge base, another application's database or any
    other file is never written into.

    Raises:
        ConfigError: `db` is not a delegator checkpoint store.
    """
    db.parent.mkdir(parents=True, exist_ok=True)
    if db.exists() and not db.is_file():
        raise ConfigError(f"{db} is not a regular file; give a checkpoint file")
    fresh = not db.exists() or db.stat().st_size == 0
    try:
        with closing(sqlite3.connect(db)) as conn:
            if fresh:
                conn.execute(f"PRAGMA application_id = {RUNS_APPLICATION_ID}")
                conn.commit()
                return
            (marker,) = conn.execute("PRAGMA application_id").fetchone()
            tables = {
                name
                for (name,) in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'"
                )
            }
            if marker == 0 and tables and tables <= LANGGRAPH_TABLES:
                conn.execute(f"PRAGMA application_id = {RUNS_APPLICATION_ID}")
                conn.commit()
                return
    except sqlite3.DatabaseError as err:
        raise ConfigError(f"{db} is not a delegator checkpoint store: {err}") from err
    if marker != RUNS_APPLICATION_ID:
        raise ConfigError(
            f"{db} is not a delegator checkpoint store (another application's file, "
            "or the knowledge base); give a new file with --db"
        )


@asynccontextmanager
async def open_checkpointer(
    db: Path, url: str | None = None
) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """The PostgreSQL checkpointer at `url` if given, else SQLite in `db`."""
    if url:
        if not url.startswith(POSTGRES_SCHEMES):
            raise ConfigError("a checkpointer URL must start with postgresql://")
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    claim_store(db)
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        yield saver
