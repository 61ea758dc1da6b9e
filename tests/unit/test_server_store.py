"""The server's checkpointer: strict, never cloned, and shared in a deployment."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from graphs.research import graph as research
from graphs.server_store import checkpointer, serializer
from graphs.subagent import graph as subagent
from runtime.context import ConfigError
from subagents.loop import drawn_loop
from tests.unit.test_subagent_loop import TASK


def test_no_exported_graph_widens_the_store_so_it_is_never_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LangGraph clones a checkpointer only to widen its allowlist; the server's
    adapter around a custom checkpointer cannot be cloned."""
    monkeypatch.setenv("DELEGATOR_SERVER_DB", str(tmp_path / "server.sqlite"))
    monkeypatch.delenv("DELEGATOR_SERVER_POSTGRES", raising=False)
    monkeypatch.setenv("DATABASE_URI", ":memory:")  # as `langgraph dev` sets it
    monkeypatch.delenv("POSTGRES_URI", raising=False)

    async def check() -> None:
        async with checkpointer() as saver:
            for app in (research, subagent, drawn_loop):
                for each in [app, *(g for _, g in app.get_subgraphs(recurse=True))]:
                    allowlist = getattr(each, "_serde_allowlist", None)
                    assert allowlist  # every graph has types of its own
                    assert saver.with_allowlist(allowlist) is saver

    asyncio.run(check())
    assert (tmp_path / "server.sqlite").exists()


class Stray(BaseModel):
    """A type no graph's state holds."""

    size: int = 1


def test_the_store_reads_back_only_the_graphs_own_types() -> None:
    serde = serializer()
    assert serde.loads_typed(serde.dumps_typed(TASK)) == TASK
    assert serde.loads_typed(serde.dumps_typed(Stray(size=3))) == {"size": 3}


@pytest.mark.parametrize("deployment", ["DATABASE_URI", "POSTGRES_URI"])
def test_a_deployment_without_a_postgres_store_is_refused(
    deployment: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELEGATOR_SERVER_DB", str(tmp_path / "server.sqlite"))
    monkeypatch.delenv("DELEGATOR_SERVER_POSTGRES", raising=False)
    monkeypatch.setenv(deployment, "postgresql://server/langgraph")

    async def enter() -> None:
        async with checkpointer():
            pass

    with pytest.raises(ConfigError, match="DELEGATOR_SERVER_POSTGRES"):
        asyncio.run(enter())
    assert not (tmp_path / "server.sqlite").exists()
