"""A run's subagents share one set of slots, whatever size a caller asks for."""

from __future__ import annotations

import asyncio

from runtime.slots import run_slot


def test_a_run_never_has_more_in_flight_than_its_slots() -> None:
    in_flight = peak = 0

    async def task(size: int) -> None:
        nonlocal in_flight, peak
        async with run_slot("run", size):
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1

    async def main() -> None:
        await asyncio.gather(*(task(2 if n % 2 else 1) for n in range(8)))

    asyncio.run(main())
    assert peak == 1  # the first task made the run's slots: one
