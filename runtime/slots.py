"""Slots: how many subagents of one run work at once, per endpoint and in all.

A run with `max_parallel` set holds one slot of the run's own for each task;
every task also holds one of its endpoint's slots, sized by what that
endpoint serves at once. Both are made when the first task asks and keyed by
what they limit, so the size never depends on which branch arrives first.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from runtime.models import ModelSettings, endpoint, parallel_limit

_slots: weakref.WeakValueDictionary[tuple[str, str], asyncio.Semaphore] = (
    weakref.WeakValueDictionary()
)
RUN = "*"
"""The key of a run's own slots, whatever endpoint its tasks use."""


@asynccontextmanager
async def slot(run_id: str, key: str, size: int) -> AsyncIterator[None]:
    """Hold one of the `size` slots named `key` of run `run_id`.

    They live as long as someone holds or awaits one.
    """
    slots = _slots.get((run_id, key))
    if slots is None:
        slots = _slots[run_id, key] = asyncio.Semaphore(size)
    async with slots:
        yield


@asynccontextmanager
async def task_slots(
    run_id: str, settings: ModelSettings, max_parallel: int = 0
) -> AsyncIterator[None]:
    """Hold what one task of run `run_id` on the settings' model needs to run.

    With `max_parallel` 0 the endpoint's own limit alone applies.
    """
    async with AsyncExitStack() as held:
        if max_parallel:
            await held.enter_async_context(slot(run_id, RUN, max_parallel))
        limit = parallel_limit(settings, max_parallel)
        await held.enter_async_context(slot(run_id, endpoint(settings), limit))
        yield
