"""Failure containment: what a step lets through, and how a failure is told."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import TypeVar

import openai
from langgraph.errors import GraphBubbleUp, NodeTimeoutError
from langgraph.types import RetryPolicy

from runtime.text import printable
from state.tasks import FailureKind

T = TypeVar("T")

CONTROL_FLOW: tuple[type[BaseException], ...] = (GraphBubbleUp,)
"""LangGraph's control flow (interrupts, commands to a parent graph).

A step that contains failures must let these through: they are how LangGraph
pauses and routes a run, and swallowing one would silently end a branch.
"""


async def settle(step: Awaitable[T]) -> T | Exception:
    """Await `step`: its value, or the error it failed with.

    LangGraph's control flow and cancellation propagate; every other error is
    returned, so the caller can record it and go on.
    """
    try:
        return await step
    except CONTROL_FLOW:
        raise
    except Exception as err:  # noqa: BLE001 - the caller decides what it costs
        return err


_TROUBLESHOOTING = re.compile(r"\s*For troubleshooting, visit:?\s*\S+", re.IGNORECASE)
MAX_ERROR_CHARS = 300


def describe(error: BaseException, limit: int = MAX_ERROR_CHARS) -> str:
    """One line saying what went wrong, in whole words, without library links.

    Control characters (a terminal escape sequence an endpoint sent) are dropped.
    """
    text = " ".join(printable(_TROUBLESHOOTING.sub("", str(error))).split())
    return shorten(text or type(error).__name__, limit)


def shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters, marked with …."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


TIMEOUTS = (TimeoutError, NodeTimeoutError, openai.APITimeoutError)
UNREACHABLE = (ConnectionError, openai.APIConnectionError)
MAX_BACKOFF_S = 30.0


def failure_kind(error: BaseException) -> FailureKind:
    """Classify a task's failure; an error of no known kind, by its cause."""
    if isinstance(error, TIMEOUTS):
        return "timeout"
    if isinstance(error, UNREACHABLE):
        return "unreachable"
    status = _status(error)
    if status is not None and 400 <= status < 500 and status != 429:
        return "rejected"
    if error.__cause__ is not None:
        return failure_kind(error.__cause__)
    return "error"


def is_transient(error: BaseException) -> bool:
    """Whether trying again may help: timeouts, lost connections, 429 and 5xx.

    Anything else (a 4xx, output that never validated, a bug) fails at once.
    An error of no known kind is judged by its cause.
    """
    if isinstance(error, TIMEOUTS + UNREACHABLE):
        return True
    status = _status(error)
    if status is not None:
        return status == 429 or status >= 500
    return error.__cause__ is not None and is_transient(error.__cause__)


def _status(error: BaseException) -> int | None:
    if isinstance(error, openai.APIStatusError):
        return error.status_code
    return None


def retry_policy(max_attempts: int, backoff_s: float) -> RetryPolicy:
    """Retries of transient errors, with exponential backoff and jitter."""
    return RetryPolicy(
        initial_interval=backoff_s,
        backoff_factor=2.0,
        max_interval=MAX_BACKOFF_S,
        max_attempts=max_attempts,
        jitter=True,
        retry_on=is_transient,
    )
