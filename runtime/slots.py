"""Slots: how many subagents of one run work at once, whatever runs beside it."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

_slots: weakref.WeakValueDictionary[str, asyncio.Semaphore] = (
    weakref.WeakValueDictionary()
)


@asynccontextmanager
async def run_slot(run_id: str, size: int) -> AsyncIterator[None]:
    """Hold one of the slots of run `run_id` while the body runs.

    A run's slots are made, `size` of them, when its first task asks; they
    live as long as someone holds or awaits one.
    """
    slots = _slots.get(run_id)
    if slots is None:
        slots = _slots[run_id] = asyncio.Semaphore(size)
    async with slots:
        yield
