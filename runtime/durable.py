"""Work a resumed run replays instead of repeating: LangGraph tasks, typed.

A task called from a node records its result in the checkpoint; when the node
runs again (after an interrupt or a crash), the call returns that result
instead of doing the work again.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar, cast

from langgraph.config import get_config
from langgraph.func import task
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, TimeoutPolicy

P = ParamSpec("P")
T = TypeVar("T")


def durable(
    work: Callable[P, Awaitable[T]],
    *,
    name: str,
    retry_policy: RetryPolicy | None = None,
    timeout: float | timedelta | TimeoutPolicy | None = None,
) -> Callable[P, Awaitable[T]]:
    """`work` as a LangGraph task with these policies; call it from a node."""
    decorate: Callable[[Any], object] = task(
        name=name, retry_policy=retry_policy, timeout=timeout
    )
    return cast(Callable[P, Awaitable[T]], decorate(work))


def attempt_number(runtime: Runtime[Any]) -> int:
    """Which attempt of the current node or task this is, from 1."""
    info = runtime.execution_info
    return info.node_attempt if info is not None else 1


def can_pause(runtime: Runtime[Any]) -> bool:
    """Whether the run has a checkpointer, so `interrupt()` can pause it."""
    info = runtime.execution_info
    return info is not None and info.thread_id is not None


def current_run_id() -> str:
    """The id of the running graph run: the server's run id, else a fresh one.

    Task ids derive from it, so a replayed run keeps its ids (the node that
    calls this is checkpointed) while two questions asked on one thread never
    share any.
    """
    config = get_config()
    run_id = config.get("run_id") or config.get("configurable", {}).get("run_id")
    return str(run_id or uuid.uuid4())
