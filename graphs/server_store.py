"""The checkpointer `delegator serve` runs its graphs on: durable, like the CLI's.

langgraph.json names `checkpointer` here, so a server killed mid-fan-out keeps
every finished subagent's writes and its threads resume without running them
again. SQLite in DELEGATOR_SERVER_DB (default data/server.sqlite), or the
PostgreSQL database at DELEGATOR_SERVER_POSTGRES in a deployment (required
there: a LangGraph Server deployment, told by DATABASE_URI or POSTGRES_URI,
runs replicas).

The serializer allows, in msgpack, exactly the types the exported graphs'
states hold (LangGraph's strict allowlist), fixed when the store opens: the
server's adapter around a custom checkpointer cannot be cloned, which
LangGraph does whenever a graph would widen the allowlist.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graphs.research import graph as research
from graphs.subagent import graph as subagent
from runtime.checkpoints import POSTGRES_SCHEMES, open_checkpointer
from runtime.context import ConfigError
from runtime.kb import PROJECT_ROOT
from subagents.loop import drawn_loop

SERVER_DB_ENV = "DELEGATOR_SERVER_DB"
SERVER_POSTGRES_ENV = "DELEGATOR_SERVER_POSTGRES"
SERVER_DATABASE_ENVS = ("DATABASE_URI", "POSTGRES_URI")
"""Where LangGraph Server keeps its threads and queue: a PostgreSQL URL in a
deployment (`langgraph dev` sets DATABASE_URI to ":memory:")."""


def serializer() -> JsonPlusSerializer:
    """A serializer that allows, in msgpack, the types of every exported graph."""
    allowed: set[tuple[str, ...]] = set()
    for app in (research, subagent, drawn_loop):
        graphs = [app, *(sub for _, sub in app.get_subgraphs(recurse=True))]
        for each in graphs:
            allowed |= getattr(each, "_serde_allowlist", None) or set()
    return JsonPlusSerializer(allowed_msgpack_modules=sorted(allowed))


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver[str]]:
    """The server's durable checkpointer (see the module's docstring)."""
    db = Path(os.environ.get(SERVER_DB_ENV) or PROJECT_ROOT / "data" / "server.sqlite")
    url = os.environ.get(SERVER_POSTGRES_ENV)
    deployed = (os.environ.get(name, "") for name in SERVER_DATABASE_ENVS)
    if not url and any(uri.startswith(POSTGRES_SCHEMES) for uri in deployed):
        raise ConfigError(
            f"set {SERVER_POSTGRES_ENV} to a PostgreSQL database of its own for the "
            "checkpoints: with DATABASE_URI or POSTGRES_URI set this is a LangGraph "
            "Server deployment, where a SQLite file per replica would split a thread"
        )
    async with open_checkpointer(db, url) as saver:
        saver.serde = serializer()
        yield saver
