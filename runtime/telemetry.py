"""Protocol events: logged and written to LangGraph's `custom` stream as they happen.

A subagent's branch runs its node in the coordinator graph itself, so a client
reads every event at the top level without asking for subgraph streams.
"""

from __future__ import annotations

import logging

from langgraph.config import get_stream_writer

from state.events import Event, EventKind
from state.tasks import TaskDefinition, TaskResult

logger = logging.getLogger("delegator.events")
Field = str | int | float | bool | None


def emit(kind: EventKind, **fields: Field) -> Event:
    """Log one event, write it to the run's `custom` stream, and return it.

    The node that emits it appends it to state. Outside a graph run, it is
    only logged.
    """
    event = Event(kind=kind, fields=fields)
    if logger.isEnabledFor(logging.INFO):
        logger.info(event.log_line())
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run
        return event
    writer({"event": event.kind, **event.model_dump(mode="json")["fields"]})
    return event


def delegated(task: TaskDefinition) -> Event:
    """The DELEGATE event of a task."""
    return emit(
        "DELEGATE",
        task_id=task.task_id,
        agent=task.agent_id,
        route=task.route or None,
        objective=task.brief,
        timeout=task.timeout_s,
        attempts=task.max_attempts,
        round=task.round,
        values=", ".join(task.values),
    )


def outcome(task: TaskDefinition, result: TaskResult) -> list[Event]:
    """A GATE event per denied tool call, a RETRY event per retry, its RESULT."""
    gated = [
        emit(
            "GATE",
            task_id=task.task_id,
            agent=task.agent_id,
            tool=denial.tool,
            rule=denial.rule,
            reason=denial.reason,
            args=denial.args,
        )
        for denial in result.denials
    ]
    retries = [
        emit(
            "RETRY",
            task_id=task.task_id,
            agent=task.agent_id,
            attempt=number,
            of=task.max_attempts,
        )
        for number in range(2, result.attempts + 1)
    ]
    done = emit(
        "RESULT",
        task_id=task.task_id,
        agent=task.agent_id,
        status=result.status,
        exec=f"{result.execution_time_s:.1f}s",
        confidence=result.confidence,
        findings=len(result.findings),
        attempts=result.attempts,
        tokens=result.tokens,
        round=task.round,
        values=", ".join(task.values),
        error=result.errors[0] if result.errors else None,
    )
    return [*gated, *retries, done]
