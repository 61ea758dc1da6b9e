"""A real PostgreSQL server backs LangGraph's Postgres checkpointer."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

pytestmark = pytest.mark.integration


class Counter(TypedDict):
    count: int
    seen: Annotated[list[str], operator.add]


def step(state: Counter) -> dict[str, object]:
    return {"count": state["count"] + 1, "seen": [f"step {state['count'] + 1}"]}


def build() -> StateGraph[Counter]:
    builder = StateGraph(Counter)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_edge("step", END)
    return builder


async def run_then_reload(url: str) -> tuple[dict[str, object], dict[str, object]]:
    config: RunnableConfig = {"configurable": {"thread_id": "thread-1"}}
    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        await saver.setup()
        graph = build().compile(checkpointer=saver)
        await graph.ainvoke({"count": 0, "seen": []}, config)
        result = await graph.ainvoke({"count": 5, "seen": ["again"]}, config)
    async with AsyncPostgresSaver.from_conn_string(url) as fresh:
        snapshot = await build().compile(checkpointer=fresh).aget_state(config)
    return dict(result), dict(snapshot.values)


def test_checkpoints_persist_across_connections(postgres_url: str) -> None:
    result, persisted = asyncio.run(run_then_reload(postgres_url))
    expected = {"count": 6, "seen": ["step 1", "again", "step 6"]}
    assert result == expected
    assert persisted == expected
