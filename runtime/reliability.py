"""Failure containment: what a step lets through and what it turns into a result."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from langgraph.errors import GraphBubbleUp

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
