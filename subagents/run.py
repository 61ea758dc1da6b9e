"""Running one task: the agent loop with the agent's driver, attempt by attempt.

Each attempt is a LangGraph task: an idle timeout (`TimeoutPolicy`; every model
and tool call is a heartbeat) and a wall-clock cap bound it, and a
`RetryPolicy` retries it on transient errors only, with exponential backoff and
jitter. The wall-clock cap is kept inside the attempt so that a timed-out
attempt still reports the tokens it spent. A final failure becomes a failed
`TaskResult`, so one branch never sinks the run. The node that runs a task
finishes with its result, which the checkpoint keeps: a resumed run does not
run it again.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs
from langgraph.errors import NodeTimeoutError
from langgraph.runtime import get_runtime
from langgraph.types import TimeoutPolicy

from runtime.context import Context
from runtime.durable import attempt_number, durable
from runtime.metering import UsageMeter
from runtime.reliability import (
    CONTROL_FLOW,
    describe,
    failure_kind,
    is_transient,
    retry_policy,
)
from runtime.slots import task_slots
from state.agents import AgentManifest
from state.budget import Budget
from state.tasks import TaskDefinition, TaskResult
from state.usage import Usage
from subagents.services import services
from subagents.state import agent_input


class AttemptError(Exception):
    """One attempt's failure, raised from its cause, with what it cost."""

    def __init__(self, cause: Exception, usage: Usage, attempt: int) -> None:
        super().__init__(describe(cause))
        self.usage = usage
        self.attempt = attempt


def time_limit(task: TaskDefinition, manifest: AgentManifest) -> float:
    """Seconds one attempt may take: the task's limit within its agent's."""
    return min(task.timeout_s, manifest.timeout_s)


async def run_task(task: TaskDefinition) -> TaskResult:
    """Run `task` to a result within its run's and endpoint's caps: never raises.

    Call it from a graph node: its attempts are LangGraph tasks. A task that
    is still failing after its attempts gives a failed result saying why.
    """
    ctx = get_runtime(Context).context
    run = await services(ctx)
    settings = run.models[run.agents[task.agent_id].model]
    idle = TimeoutPolicy(idle_timeout=task.idle_timeout_s or None)
    attempt = durable(
        run_attempt,
        name="attempt",
        retry_policy=retry_policy(task.max_attempts, ctx.retry_backoff_s),
        timeout=idle if task.idle_timeout_s else None,
    )
    started = datetime.now(UTC)
    async with task_slots(task.run_id, settings, ctx.max_parallel):
        try:
            return await attempt(task)
        except CONTROL_FLOW:
            raise
        except Exception as error:  # noqa: BLE001 - a failed task, not a failed run
            return failed(task, error, started)


def failed(task: TaskDefinition, error: Exception, started: datetime) -> TaskResult:
    """The failed result of a task whose last attempt raised `error`."""
    kind = failure_kind(error)
    if isinstance(error, NodeTimeoutError):
        reason = f"silent for more than {task.idle_timeout_s:g}s"
    else:
        reason = describe(error)
    attempts, usage = task.max_attempts, None
    if isinstance(error, AttemptError):
        usage = error.usage
        if not is_transient(error):
            attempts = error.attempt
    return TaskResult.of(
        task,
        findings=[],
        errors=[reason],
        started_at=started,
        seconds=(datetime.now(UTC) - started).total_seconds(),
        usage=usage,
        failure=kind,
        attempts=attempts,
    )


def traced(task: TaskDefinition, agent: AgentManifest, attempt: int) -> RunnableConfig:
    """How a subagent run reads in a trace: a delegation named by agent and facet.

    Its tags and metadata carry the task, the agent and its version, the round,
    the facet, the attempt and the coordinator's run id.
    """
    return {
        "run_name": f"{task.agent_id}: {', '.join(task.values)}"[:120],
        "tags": ["delegator:subagent", f"agent:{task.agent_id}", f"round:{task.round}"],
        "metadata": {
            "task_id": task.task_id,
            "agent": task.agent_id,
            "agent_version": agent.version,
            "round": task.round,
            "facet": task.facet_id,
            "values": list(task.values),
            "attempt": attempt,
            "run_id": task.run_id,
        },
    }


async def run_attempt(task: TaskDefinition) -> TaskResult:
    """One attempt: the agent loop from a fresh `[system prompt, brief]`.

    A failure is raised as an `AttemptError` from its cause; the retry
    policy judges it by that cause.
    """
    runtime = get_runtime(Context)
    number = attempt_number(runtime)
    run = await services(runtime.context)
    manifest = run.agents[task.agent_id]
    loop = await run.loop(task.agent_id)
    limit = time_limit(task, manifest)
    budget = task.budget.tighter(manifest.budget).tighter(Budget(seconds=limit))
    start = agent_input(manifest.system_prompt, task, budget)
    meter = UsageMeter()
    started, clock = datetime.now(UTC), time.perf_counter()
    config = merge_configs(
        ensure_config(), traced(task, manifest, number), {"callbacks": [meter]}
    )
    try:
        async with asyncio.timeout(limit):
            outcome = await loop.run(start, config)
    except CONTROL_FLOW:
        raise
    except TimeoutError:
        timeout = TimeoutError(f"timed out after {limit:g}s")
        raise AttemptError(timeout, meter.usage, number) from timeout
    except Exception as error:
        raise AttemptError(error, meter.usage, number) from error
    return TaskResult.of(
        task,
        findings=outcome["findings"],
        errors=outcome["errors"],
        started_at=started,
        seconds=time.perf_counter() - clock,
        usage=meter.usage,
        steps=outcome["steps"],
        failure=outcome.get("failure"),
        attempts=number,
        denials=outcome.get("denials", []),
        evidence=outcome.get("cited", []),
    )
