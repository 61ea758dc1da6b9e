"""Helpers the tests share: running the graph and extractive contexts."""

from __future__ import annotations

import asyncio
from typing import Any

from graphs.research import graph
from runtime.context import Context


def research(question: str, context: Context) -> dict[str, Any]:
    """Run the research graph to its end and return the final state."""
    return asyncio.run(graph.ainvoke({"question": question}, context=context))


def extractive(kb: str, **settings: Any) -> Context:
    """A context with no LLM on the knowledge base at `kb`."""
    return Context(
        lead_model="extractive", subagent_model="extractive", kb_path=kb, **settings
    )
