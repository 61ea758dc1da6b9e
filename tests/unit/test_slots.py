"""A run's subagents share slots per endpoint, whichever branch starts first."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from runtime.models import REMOTE_PARALLEL, RULE_PARALLEL, ModelSettings
from runtime.slots import task_slots

RULES = ModelSettings(spec="extractive", role="subagent")
REMOTE = ModelSettings(
    spec="openai:some-model", role="subagent", base_url="http://api.example/v1"
)


def peaks(order: list[ModelSettings], max_parallel: int) -> Counter[str]:
    """The most tasks in flight at once, per settings' spec and in all."""
    in_flight: Counter[str] = Counter()
    peak: Counter[str] = Counter()

    async def task(settings: ModelSettings) -> None:
        async with task_slots("run", settings, max_parallel):
            for key in (settings.spec, "all"):
                in_flight[key] += 1
                peak[key] = max(peak[key], in_flight[key])
            await asyncio.sleep(0.01)
            for key in (settings.spec, "all"):
                in_flight[key] -= 1

    async def main() -> None:
        await asyncio.gather(*(task(s) for s in order))

    asyncio.run(main())
    return peak


@pytest.mark.parametrize("first", [RULES, REMOTE], ids=["rules first", "remote first"])
def test_each_endpoint_keeps_its_own_cap_whichever_task_starts_first(
    first: ModelSettings,
) -> None:
    second = REMOTE if first is RULES else RULES
    peak = peaks([first] + [second, first] * 40, max_parallel=0)
    assert peak[RULES.spec] == RULE_PARALLEL
    assert peak[REMOTE.spec] == REMOTE_PARALLEL
    assert peak["all"] == RULE_PARALLEL + REMOTE_PARALLEL


def test_max_parallel_caps_the_whole_run_across_endpoints() -> None:
    peak = peaks([RULES, REMOTE] * 20, max_parallel=3)
    assert peak["all"] == 3


def test_two_endpoints_of_one_provider_are_two_endpoints() -> None:
    other = ModelSettings(
        spec="openai:some-model", role="subagent", base_url="http://other.example/v1"
    )
    peak = peaks([REMOTE, other] * 20, max_parallel=0)
    assert peak["all"] == 2 * REMOTE_PARALLEL
