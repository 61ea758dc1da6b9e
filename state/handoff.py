"""The structured hand-off given to a human when a run escalates."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from state.plan import CoveragePlan


class FailedTask(BaseModel):
    """A task that did not succeed, with why."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    agent_id: str
    errors: tuple[str, ...]


class HandoffSummary(BaseModel):
    """Everything a human needs to decide how an escalated run goes on."""

    model_config = ConfigDict(frozen=True)

    reason: str
    urgency: Literal["low", "medium", "high"]
    question: str
    plan: CoveragePlan
    coverage: float
    failed_tasks: tuple[FailedTask, ...] = ()
    attempted_actions: tuple[str, ...] = ()
    recommended_action: Literal["retry", "skip", "add_facets", "abort"]
    evidence: tuple[str, ...] = ()
