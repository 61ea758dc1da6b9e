"""Helpers the tests share: running the graph and extractive contexts."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from graphs.research import builder
from runtime.context import Context
from runtime.kb import KnowledgeBase
from state.agents import AgentManifest
from state.graph import ResearchState
from subagents.gates import GatePolicy, Gates
from subagents.loop import Driver, Loop
from subagents.tools import make_tools


def research(question: str, context: Context) -> dict[str, Any]:
    """Run the research graph to its end and return its whole final state.

    The graph's output is only the plan, coverage and report; the thread's
    state also holds every result, finding and event.
    """
    return asyncio.run(run_to_end({"question": question}, context))


async def run_to_end(
    given: Any, context: Context, app: Any = None, thread_id: str = "t"
) -> dict[str, Any]:
    """Run `given` on a checkpointed thread and return the thread's state."""
    app = app or builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    await app.ainvoke(given, config, context=context)
    return dict((await app.aget_state(config)).values)


def extractive_flags(kb: str) -> list[str]:
    """The CLI flags of an extractive run on the knowledge base at `kb`."""
    return ["--kb", kb, "--lead-model", "extractive", "--subagent-model", "extractive"]


def extractive(kb: str, **settings: Any) -> Context:
    """A context with no LLM on the knowledge base at `kb`."""
    return Context(
        lead_model="extractive", subagent_model="extractive", kb_path=kb, **settings
    )


def run_node(node: Any, state: ResearchState, context: Context) -> dict[str, Any]:
    """Run one coordinator node inside a graph and return the update it made.

    A node that calls LangGraph tasks (or `interrupt`) needs a running graph.
    """
    builder = StateGraph(ResearchState, context_schema=Context)
    builder.add_node("node", node)
    builder.add_edge(START, "node")

    async def run() -> dict[str, Any]:
        async for update in builder.compile().astream(
            state, context=context, stream_mode="updates"
        ):
            if "node" in update:
                return dict(update["node"])
        raise AssertionError("the node made no update")

    return asyncio.run(run())


def agent_loop_of(manifest: AgentManifest, driver: Driver, kb: str) -> Loop:
    """An agent's loop on the knowledge base at `kb`, gated by its definition."""
    base = KnowledgeBase(kb)
    tools = {n: t for n, t in make_tools(base).items() if n in manifest.allowed_tools}
    gates = Gates(manifest, GatePolicy(), frozenset(tools))
    return Loop(manifest, driver, tools, gates, base)
