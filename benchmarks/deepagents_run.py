"""One deepagents fan-out of N fake subagents, timed.

Run as `python -m benchmarks.deepagents_run`.

The main agent's first call asks for N `task` tool calls at once (one per
value), each subagent answers in one call, and the main agent's second call
concludes: three fake model calls of `LATENCY_S` on the critical path. Prints
one JSON line like `benchmarks.delegator_run`.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

# Installed by `make bench` (benchmarks/requirements.txt), not by `make install`.
from deepagents import (  # type: ignore[import-not-found, unused-ignore]
    SubAgent,
    create_deep_agent,
)
from langchain.agents.middleware.types import (  # type: ignore[import-not-found, unused-ignore]
    InputAgentState,
)
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.common import answer, median, peak_mib
from benchmarks.fakes import Coordinator, Researcher, value_names
from runtime.interpreter import settle_interpreter


async def one_run(values: list[str], researcher: Researcher) -> tuple[float, int, int]:
    """Run one fan-out over `values`.

    Returns:
        Its wall time, the subagent reports the main agent got back, and how
        many calls the main agent made.
    """
    spec: SubAgent = {
        "name": "researcher",
        "description": "Finds what the sources say about one value.",
        "system_prompt": "Report what the sources say about the value you are given.",
        "model": researcher,
    }
    coordinator = Coordinator(values=values)
    agent = create_deep_agent(
        model=coordinator,
        subagents=[spec],
        system_prompt="Delegate one task per value, then summarise.",
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": str(uuid.uuid4())}}
    ask: InputAgentState = {
        "messages": [HumanMessage("Research: " + ", ".join(values))]
    }
    settle_interpreter()
    started = time.perf_counter()
    final = await agent.ainvoke(ask, config)
    wall = time.perf_counter() - started
    reports = [
        m
        for m in final["messages"]
        if isinstance(m, ToolMessage) and str(m.content).startswith("Report: ")
    ]
    return wall, len(reports), coordinator.calls


async def measure(n: int, runs: int) -> dict[str, Any]:
    """Warm up at N=1, then time `runs` fan-outs of `n` subagents."""
    values = value_names(n)
    researcher = Researcher()
    await one_run(values[:1], researcher)
    researcher.calls = 0
    walls, reports, lead_calls = [], [], 0
    for _ in range(runs):
        wall, got, calls = await one_run(values, researcher)
        walls.append(round(wall, 3))
        reports.append(got)
        lead_calls += calls
    return {
        "system": "deepagents",
        "n": n,
        "walls_s": walls,
        "median_s": median(walls),
        "peak_mib": peak_mib(),
        "model_calls": researcher.calls,
        "expected_calls": n * runs,
        "covered": min(reports),
        "lead_calls": lead_calls,
    }


def main() -> None:
    """Parse the arguments, measure, print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, required=True, help="parallel subagents")
    parser.add_argument("--runs", type=int, default=3, help="timed runs")
    args = parser.parse_args()
    answer(asyncio.run(measure(args.n, args.runs)))


if __name__ == "__main__":
    main()
