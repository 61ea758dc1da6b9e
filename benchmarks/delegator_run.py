"""One delegator fan-out of N fake subagents, timed.

Run as `python -m benchmarks.delegator_run`.

The planner is skipped: a plan of N facets and its N tasks are written to a
fresh thread as if `dispatch` had run (a model's plan has at most 12 facets),
and the graph goes on from there, one round, no re-delegation. Every model call
takes `LATENCY_S`: each subagent answers in one call, then the lead's breadth
check (gap_check's enumeration) finds nothing more and the lead writes the
report's opening: three calls on the critical path, as for deepagents' main
agent, subagent, main agent. Prints one JSON line: the wall time of each timed
run, their median, the calls made and the process's peak memory.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from benchmarks.common import answer, median, peak_mib
from benchmarks.fakes import (
    DelegatorLead,
    DelegatorSubagent,
    SlowModel,
    value_names,
    write_corpus,
)
from graphs.research import compiled
from roles.delegation import first_round
from runtime.checkpoints import open_checkpointer
from runtime.context import Context
from runtime.interpreter import settle_interpreter
from runtime.kb import ingest
from runtime.models import ModelSettings, register_provider
from state.plan import CoveragePlan, Dimension, facets_for_values
from subagents.services import services

QUESTION = "What do the sources say about each of these coastal settlements?"
MODELS: dict[str, SlowModel] = {}


def bench_model(name: str, settings: ModelSettings) -> BaseChatModel:
    """The benchmark's model of this name (`bench:<name>` specs)."""
    return MODELS[name]


def context(n: int, kb: Path) -> Context:
    """A one-round run of `n` parallel subagents on the fake model."""
    return Context(
        lead_model="bench:lead",
        subagent_model="bench:sub",
        subagent_protocol="tools",
        kb_path=str(kb),
        max_subagents=n,
        max_parallel=n,
        max_rounds=0,
        task_attempts=1,
    )


@asynccontextmanager
async def checkpointer(kind: str, url: str, folder: Path) -> AsyncIterator[Any]:
    """The checkpointer to run on: in memory, or the CLI's (SQLite, PostgreSQL)."""
    if kind == "memory":
        yield InMemorySaver()
        return
    async with open_checkpointer(
        folder / "cp.db", url if kind == "postgres" else None
    ) as saver:
        yield saver


async def one_run(
    app: Any, values: list[str], kb: Path, profile: cProfile.Profile | None = None
) -> tuple[float, int]:
    """Run one round over `values`; its wall time and how many values it covered."""
    ctx = context(len(values), kb)
    config: RunnableConfig = {"configurable": {"thread_id": str(uuid.uuid4())}}
    plan = CoveragePlan(
        question=QUESTION,
        dimensions=(Dimension(name="settlement", values=tuple(values)),),
        facets=facets_for_values(QUESTION, values),
    )
    agents = dict((await services(ctx)).agents)
    start = first_round(QUESTION, plan, ctx, str(uuid.uuid4()), agents)
    await app.aupdate_state(config, start, as_node="dispatch")
    settle_interpreter()
    if profile is not None:
        profile.enable()
    started = time.perf_counter()
    await app.ainvoke(None, config, context=ctx)
    wall = time.perf_counter() - started
    if profile is not None:
        profile.disable()
    final = (await app.aget_state(config)).values
    covered = {v for f in final["findings"] if f.verified for v in f.values}
    return wall, len(covered & set(values))


async def measure(
    n: int, runs: int, kind: str, url: str, profile_to: str
) -> dict[str, Any]:
    """Warm up at N=1, then time `runs` rounds of `n` subagents."""
    MODELS["sub"] = model = DelegatorSubagent()
    MODELS["lead"] = lead = DelegatorLead()
    register_provider("bench", bench_model)
    with tempfile.TemporaryDirectory(prefix="delegator-bench-") as tmp:
        folder = Path(tmp)
        values = value_names(n)
        write_corpus(folder / "corpus", values)
        kb = folder / "kb.sqlite"
        ingest(kb, [folder / "corpus"])
        async with checkpointer(kind, url, folder) as saver:
            assert isinstance(saver, BaseCheckpointSaver)
            app = compiled(saver)
            await one_run(app, values[:1], kb)
            model.calls = lead.calls = 0
            walls, covered = [], []
            profile = cProfile.Profile() if profile_to else None
            for i in range(runs):
                last = i == runs - 1
                wall, got = await one_run(app, values, kb, profile if last else None)
                walls.append(round(wall, 3))
                covered.append(got)
            if profile is not None:
                profile.dump_stats(profile_to)
    return {
        "system": "delegator",
        "checkpointer": kind,
        "n": n,
        "walls_s": walls,
        "median_s": median(walls),
        "peak_mib": peak_mib(),
        "model_calls": model.calls,
        "expected_calls": n * runs,
        "covered": min(covered),
        "lead_calls": lead.calls,
    }


def main() -> None:
    """Parse the arguments, measure, print the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, required=True, help="parallel subagents")
    parser.add_argument("--runs", type=int, default=3, help="timed runs")
    parser.add_argument(
        "--checkpointer", choices=("memory", "sqlite", "postgres"), default="memory"
    )
    parser.add_argument("--url", default="", help="PostgreSQL URL")
    parser.add_argument("--profile", default="", help="cProfile the last run here")
    args = parser.parse_args()
    answer(
        asyncio.run(
            measure(args.n, args.runs, args.checkpointer, args.url, args.profile)
        )
    )


if __name__ == "__main__":
    main()
