"""Work a resumed run replays instead of repeating: LangGraph tasks, typed.

A task called from a node records its result in the checkpoint; when the node
runs again (after an interrupt or a crash), the call returns that result
instead of doing the work again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, ParamSpec, TypeVar, cast

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
