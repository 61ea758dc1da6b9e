"""Slots: how many subagents of one run work at once, whatever runs beside it."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

_slots: weakref.WeakValueDictionary[tuple[str, int], asyncio.Semaphore] = (
    weakref.WeakValueDictionary()
)


@asynccontextmanager
async def run_slot(run_id: str, size: int) -> AsyncIterator[None]:
    """Hold one of `size` slots of run `run_id` while the body runs.

    The slots of a run live as long as someone holds or awaits one.
    """
    key = (run_id, size)
    slots = _slots.get(key)
    if slots is None:
        slots = _slots[key] = asyncio.Semaphore(size)
    async with slots:
        yield
