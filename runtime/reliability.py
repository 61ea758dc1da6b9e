"""Failure containment: what a step lets through, and how a failure is told."""

from __future__ import annotations

import re
from collections.abc import Awaitable
from typing import TypeVar

import openai
from langgraph.errors import GraphBubbleUp

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
    """One line saying what went wrong, in whole words, without library links."""
    text = " ".join(_TROUBLESHOOTING.sub("", str(error)).split())
    return shorten(text or type(error).__name__, limit)


def shorten(text: str, limit: int) -> str:
    """`text` cut at a word boundary to at most `limit` characters, marked with …."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def failure_kind(error: BaseException) -> FailureKind:
    """Classify a task's failure."""
    if isinstance(error, TimeoutError | openai.APITimeoutError):
        return "timeout"
    if isinstance(error, ConnectionError | openai.APIConnectionError):
        return "unreachable"
    return "error"
