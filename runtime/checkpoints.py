"""Where the CLI's runs are checkpointed: SQLite by default, PostgreSQL by URL.

Every superstep's checkpoint and every finished task's writes are saved, so a
run stopped by Ctrl-C, a crash or an escalation resumes from its thread without
running a finished subagent again.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
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

    db.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
        yield saver
