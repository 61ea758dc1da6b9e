"""Circuit breakers per agent, derived from the run's results in order."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from state.tasks import TaskResult


class Breaker(BaseModel):
    """One agent's circuit: consecutive failures, and whether it is open."""

    model_config = ConfigDict(frozen=True)

    failures: int = 0
    open: bool = False


def breakers_after(results: Iterable[TaskResult], threshold: int) -> dict[str, Breaker]:
    """Each agent's breaker after these results, taken in the order they ended.

    `threshold` consecutive failures open an agent's circuit; a success
    closes it and resets the count. A task a person let go (skip or abort)
    counts for nothing.
    """
    breakers: dict[str, Breaker] = {}
    ended = sorted(
        results, key=lambda r: (r.round, r.started_at.timestamp() + r.execution_time_s)
    )
    for result in ended:
        if result.escalation in ("skip", "abort"):
            continue
        if result.status == "failed":
            failures = breakers.get(result.agent_id, Breaker()).failures + 1
            breakers[result.agent_id] = Breaker(
                failures=failures, open=failures >= threshold
            )
        else:
            breakers[result.agent_id] = Breaker()
    return breakers
