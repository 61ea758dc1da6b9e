"""Traces read as a tree of named delegations; the run summary adds it all up."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from graphs.research import builder
from tests.support import extractive

QUESTION = "Which natural disasters struck in 2022 and 2023?"


class Spy(BaseCallbackHandler):
    """Keeps the name, tags and metadata of every chain run, as a tracer sees them."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append(
            {
                "name": kwargs.get("name"),
                "tags": tags or [],
                "metadata": metadata or {},
                "run_id": run_id,
                "parent": parent_run_id,
            }
        )


def test_every_subagent_run_is_a_named_delegation_with_its_metadata(
    freshwiki_kb: str,
) -> None:
    spy = Spy()
    app = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t"}, "callbacks": [spy]}

    async def run() -> dict[str, Any]:
        context = extractive(freshwiki_kb, max_rounds=1)
        await app.ainvoke({"question": QUESTION}, config, context=context)
        return dict((await app.aget_state(config)).values)

    state = asyncio.run(run())
    tagged = [r for r in spy.runs if "delegator:subagent" in r["tags"]]
    inside = {r["run_id"] for r in tagged}
    # each delegation's own steps inherit its tags; the delegation is their root
    delegations = [r for r in tagged if r["parent"] not in inside]
    assert len(delegations) == len(state["results"])
    by_task = {d["metadata"]["task_id"]: d for d in delegations}
    for result in state["results"].values():
        delegation = by_task[result.task_id]
        assert delegation["name"] == f"{result.agent_id}: {', '.join(result.values)}"
        metadata = delegation["metadata"]
        assert metadata["agent"] == result.agent_id
        assert metadata["agent_version"] == "1"
        assert metadata["round"] == result.round
        assert metadata["facet"] == result.facet_id
        assert metadata["run_id"] == state["run_id"]
        assert metadata["attempt"] == result.attempts == 1
        assert f"agent:{result.agent_id}" in delegation["tags"]
        assert delegation["parent"] is not None  # under the coordinator's branch
    summary = state["report"].summary
    assert summary.tasks == len(state["results"]) == summary.succeeded
    assert len(summary.coverage_by_round) == len(state["coverage"]) == 2
    assert set(summary.calls_by_role) == {"lead", "verifier", "subagents"}
    assert summary.wall_seconds >= summary.critical_path_seconds > 0
