"""A research run on a checkpointed thread: start it, resume it, escalate.

A new thread starts from a question. A thread holding an unfinished run
(stopped by Ctrl-C, killed, or waiting for a person) resumes where its last
checkpoint left it; finished subagents are not run again. A run that
escalates asks the person at the terminal, or stops and says how to resume.
A fork copies a checkpoint of one thread into a new thread and goes on there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt
from rich.console import Console

from cli.progress import RunProgress
from graphs.research import FINISHED, PLANNED, compiled, continues_after
from roles.delegation import first_round
from runtime.checkpoints import open_checkpointer
from runtime.context import Context
from runtime.interpreter import settle_interpreter
from runtime.mcp import stop_servers
from runtime.paths import read_input
from runtime.thread_lock import postgres_thread_lock, sqlite_thread_lock
from state.graph import InputState, ResearchState
from state.plan import CoveragePlan, lint_plan
from subagents.services import services

Ask = Callable[[Mapping[str, Any]], str]
"""Shows a person a handoff and returns their decision."""


MAX_PLAN_BYTES = 2**20
"""A plan file (`fork --plan`) is at most 1 MiB."""


class ThreadError(ValueError):
    """A thread that cannot be started or resumed as asked."""


class EscalatedError(Exception):
    """The run waits for a person; resume its thread with a decision."""

    def __init__(self, thread_id: str, handoffs: list[Mapping[str, Any]]) -> None:
        super().__init__(f"thread {thread_id} waits for a decision")
        self.thread_id = thread_id
        self.handoffs = handoffs


@dataclass(frozen=True)
class RunRequest:
    """What to run, and where its checkpoints go.

    Attributes:
        question: The question; None to resume the thread's unfinished run.
        context: The run's settings.
        thread_id: The thread to start or resume.
        db: The SQLite file of checkpoints.
        checkpointer_url: A PostgreSQL URL to use instead of `db`.
        decision: The decision for a run waiting on a person, if given.
        fork: The thread and checkpoint this run forks, if it is a fork.
    """

    question: str | None
    context: Context
    thread_id: str
    db: Path
    checkpointer_url: str | None = None
    decision: str | None = None
    fork: ForkFrom | None = None


async def run_thread(
    request: RunRequest, ask: Ask | None, progress: Console | None
) -> ResearchState:
    """Run or resume the thread to its end and return its final state.

    One run per thread: another process running it refuses this one.

    Raises:
        ThreadError: The thread cannot run as asked.
        ThreadBusyError: Another process runs the thread.
        EscalatedError: A branch or the run waits for a person and `ask` is None.
    """
    async with (
        thread_lock(request),
        open_checkpointer(request.db, request.checkpointer_url) as saver,
    ):
        app = compiled(saver)
        settle_interpreter()
        try:
            return await run_to_end(app, request, ask, progress)
        finally:
            await stop_servers()


@asynccontextmanager
async def thread_lock(request: RunRequest) -> AsyncIterator[None]:
    """The lock of the request's thread, in its checkpoint store, held while run."""
    if request.checkpointer_url:
        async with postgres_thread_lock(request.checkpointer_url, request.thread_id):
            yield
    else:
        with sqlite_thread_lock(request.db, request.thread_id):
            yield


async def run_to_end(
    app: CompiledStateGraph[ResearchState, Context, InputState, Any],
    request: RunRequest,
    ask: Ask | None,
    progress: Console | None,
) -> ResearchState:
    """Run or resume the thread on `app` until it ends or waits with no one to ask."""
    config: RunnableConfig = {"configurable": {"thread_id": request.thread_id}}
    if request.fork is not None:
        run_input: InputState | Command[Any] | None = await forked_input(
            app, request, request.fork
        )
    else:
        run_input = await first_input(app, config, request, ask)
    while True:
        with RunProgress(progress) if progress else nullcontext() as shown:
            async for event in app.astream(
                run_input,
                config,
                context=request.context,
                stream_mode="custom",
            ):
                if shown is not None:
                    shown.on_event(cast(Mapping[str, Any], event))
        snapshot = await app.aget_state(config)
        if not snapshot.interrupts:
            return cast(ResearchState, snapshot.values)
        run_input = decide(request.thread_id, snapshot.interrupts, None, ask)


async def first_input(
    app: CompiledStateGraph[ResearchState, Context, InputState, Any],
    config: RunnableConfig,
    request: RunRequest,
    ask: Ask | None,
) -> InputState | Command[Any] | None:
    """What the thread's run starts from: a question, a decision, or its checkpoint."""
    snapshot = await app.aget_state(config)
    thread = request.thread_id
    unfinished = bool(snapshot.values) and bool(snapshot.next)
    if not unfinished:
        if request.question is None:
            raise ThreadError(
                f"thread {thread} holds no unfinished run; give a question to start one"
            )
        return {"question": request.question}
    asked = snapshot.values.get("question")
    if request.question is not None and request.question != asked:
        raise ThreadError(
            f"thread {thread} holds an unfinished run of another question "
            f"({asked!r}); resume it without a question, or choose another thread"
        )
    if snapshot.interrupts:
        return decide(thread, snapshot.interrupts, request.decision, ask)
    return None


def decide(
    thread_id: str,
    interrupts: tuple[Interrupt, ...],
    decision: str | None,
    ask: Ask | None,
) -> Command[Any]:
    """The resume command answering every waiting interrupt."""
    if decision is None and ask is None:
        raise EscalatedError(thread_id, [i.value for i in interrupts])
    answers: dict[str, Any] = {}
    for waiting in interrupts:
        given = decision if decision is not None else cast(Ask, ask)(waiting.value)
        answers[waiting.id] = parsed(given)
    return Command(resume=answers)


def parsed(decision: str) -> Any:
    """A decision as given: a JSON object, or words such as 'skip' or 'hint: ...'."""
    text = decision.strip()
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise ThreadError(f"--decision is not valid JSON: {err}") from err
    return text


@dataclass(frozen=True)
class ForkFrom:
    """Where a fork starts: a thread, one of its checkpoints, maybe a new plan.

    Attributes:
        thread_id: The thread to fork; it is left untouched.
        checkpoint_id: The checkpoint to start from; None for its last.
        plan: A plan file (CoveragePlan JSON) to send out instead of its plan.
    """

    thread_id: str
    checkpoint_id: str | None = None
    plan: Path | None = None


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint of a thread, as `delegator history` lists it."""

    checkpoint_id: str
    step: int
    next: tuple[str, ...]


async def thread_history(
    thread_id: str, db: Path, checkpointer_url: str | None
) -> list[Checkpoint]:
    """The thread's checkpoints, newest first."""
    async with open_checkpointer(db, checkpointer_url) as saver:
        app = compiled(saver)
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        return [
            Checkpoint(
                checkpoint_id=str(s.config["configurable"]["checkpoint_id"]),
                step=int(s.metadata.get("step", -1)) if s.metadata else -1,
                next=tuple(s.next),
            )
            async for s in app.aget_state_history(config)
        ]


async def forked_input(
    app: CompiledStateGraph[ResearchState, Context, InputState, Any],
    request: RunRequest,
    fork: ForkFrom,
) -> InputState | None:
    """Copy the forked checkpoint's state to the new thread; what to run it with.

    The new thread goes on from where the checkpoint was (with a plan file: from
    the fan-out of that plan; with a question: from that question). LangGraph's
    state history is read, never written: the forked thread stays as it was.
    """
    source: dict[str, Any] = {"thread_id": fork.thread_id}
    if fork.checkpoint_id:
        source["checkpoint_id"] = fork.checkpoint_id
    snapshot = await app.aget_state({"configurable": source})
    if not snapshot.values:
        where = f" at checkpoint {fork.checkpoint_id}" if fork.checkpoint_id else ""
        raise ThreadError(f"thread {fork.thread_id} holds no state{where}")
    target: RunnableConfig = {"configurable": {"thread_id": request.thread_id}}
    if (await app.aget_state(target)).values:
        raise ThreadError(f"thread {request.thread_id} exists; fork to a new one")
    values = dict(snapshot.values)
    if request.question is not None:
        await app.aupdate_state(target, values, as_node=FINISHED)
        return {"question": request.question}
    if fork.plan is not None:
        values |= await replanned(values, fork.plan, request.context)
        await app.aupdate_state(target, values, as_node=PLANNED)
        return None
    upcoming = snapshot.next[0] if snapshot.next else None
    if upcoming == PLANNED:
        return {"question": values["question"]}
    as_node = continues_after(upcoming, values.get("round", 0))
    await app.aupdate_state(target, values, as_node=as_node)
    return None


async def replanned(
    values: dict[str, Any], plan_file: Path, context: Context
) -> dict[str, Any]:
    """A fresh first round for the plan in `plan_file`, on the forked question."""
    raw = read_input(plan_file, MAX_PLAN_BYTES)
    try:
        plan = CoveragePlan.model_validate_json(raw)
    except ValueError as err:
        raise ThreadError(f"{plan_file} is not a plan: {err}") from err
    plan = lint_plan(plan.model_copy(update={"question": values["question"]}))
    agents = dict((await services(context)).agents)
    return first_round(values["question"], plan, context, str(uuid.uuid4()), agents)
