"""The delegation contract: what is sent to a subagent and what comes back."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from state.budget import Budget
from state.denials import Denial
from state.evidence import ToolEvidence
from state.findings import Finding, Source
from state.plan import Facet
from state.usage import Usage

TASK_NAMESPACE = uuid.UUID("6f1d7a52-3c1e-4d0b-9a57-64a3f1f0c2de")


def task_id_for(
    run_id: str, round_no: int, facet_id: str, values: Sequence[str] = ()
) -> str:
    """Deterministic task id: the same run, round, facet and values give the same id.

    A round may send a facet's values in several tasks, so they are part of it.
    """
    key = "/".join([run_id, str(round_no), facet_id, *values])
    return str(uuid.uuid5(TASK_NAMESPACE, key))


class TaskDefinition(BaseModel):
    """One delegated task, as the coordinator hands it to a subagent."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    run_id: str = Field(description="Id of the whole run the task belongs to.")
    agent_id: str
    facet_id: str
    question: str = Field(description="The question the whole run answers.")
    brief: str = Field(description="What to find out: the facet's brief.")
    values: tuple[str, ...] = Field(description="Dimension values to cover.")
    acceptance: str = Field(description="What a good answer holds.")
    cited: tuple[Source, ...] = Field(
        default=(),
        description="Sources the run already cites: not to repeat; searches "
        "leave their passages out.",
    )
    earlier: tuple[str, ...] = Field(
        default=(),
        description="What earlier attempts at these values found, or why they failed.",
    )
    timeout_s: float = Field(default=60.0, gt=0, description="Seconds per attempt.")
    idle_timeout_s: float = Field(
        default=0.0,
        ge=0,
        description="Seconds an attempt may go without a model or tool call; 0 for "
        "no limit.",
    )
    max_attempts: int = Field(
        default=3,
        ge=1,
        description="Attempts, the first included; only transient errors are retried.",
    )
    budget: Budget = Budget()
    failures: int = Field(
        default=0, ge=0, description="Earlier tasks of this facet that failed."
    )
    approved_tools: tuple[str, ...] = Field(
        default=(), description="Dangerous tools a person approved for this task."
    )
    route: str = Field(default="", description="Why this agent was chosen.")
    round: int = 0

    def with_hint(self, hint: str) -> TaskDefinition:
        """The task with a person's hint added to its brief, if any."""
        if not hint:
            return self
        return self.model_copy(
            update={"earlier": (*self.earlier, f"A person's hint: {hint}")}
        )

    @classmethod
    def for_facet(
        cls,
        facet: Facet,
        *,
        question: str,
        run_id: str,
        round_no: int,
        values: tuple[str, ...] | None = None,
        cited: tuple[Source, ...] = (),
        earlier: tuple[str, ...] = (),
        **limits: Any,
    ) -> TaskDefinition:
        """The task that sends `facet` (or some of its values) out in a round.

        `limits` are the task's timeouts, attempts, budget and agent_id, when
        not the facet's.
        """
        values = values or facet.values
        return cls(
            task_id=task_id_for(run_id, round_no, facet.id, values),
            run_id=run_id,
            agent_id=limits.pop("agent_id", facet.agent_id),
            facet_id=facet.id,
            question=question,
            brief=facet.brief,
            values=values,
            acceptance=facet.acceptance,
            cited=cited,
            earlier=earlier,
            round=round_no,
            **limits,
        )


TaskStatus = Literal["success", "partial", "failed"]
FailureKind = Literal["timeout", "unreachable", "invalid output", "rejected", "error"]
"""Why a task failed: out of time, its model endpoint unreachable, its output
never valid, refused by its endpoint (a 4xx), or any other error."""


class TaskResult(BaseModel):
    """What crosses back from a subagent: typed findings, never its messages."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    agent_id: str
    facet_id: str
    round: int
    values: tuple[str, ...] = Field(description="The values it was asked to cover.")
    status: TaskStatus
    findings: tuple[Finding, ...] = ()
    errors: tuple[str, ...] = ()
    started_at: datetime
    execution_time_s: float = Field(ge=0.0)
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    tokens: int = Field(default=0, ge=0, description="Model tokens used, 0 if none.")
    context_tokens: int = Field(
        default=0, ge=0, description="The largest prompt its model saw, in tokens."
    )
    steps: int = Field(default=0, ge=0, description="Model turns and tool calls.")
    calls: int = Field(default=0, ge=0, description="Model calls that answered.")
    failure: FailureKind | None = Field(
        default=None, description="Why a failed task failed."
    )
    attempts: int = Field(default=1, ge=1, description="Attempts it took.")
    denials: tuple[Denial, ...] = Field(
        default=(), description="Tool calls its gates refused."
    )
    evidence: tuple[ToolEvidence, ...] = Field(
        default=(),
        description="The tool evidence its findings cite, as code recorded it.",
    )
    escalation: Literal["pending", "retry", "hint", "skip", "abort"] | None = Field(
        default=None,
        description="What a person (or the skip rule) decided for it; "
        "pending while it waits for the decision.",
    )

    @classmethod
    def of(
        cls,
        task: TaskDefinition,
        *,
        findings: Sequence[Finding],
        errors: Sequence[str],
        started_at: datetime,
        seconds: float,
        usage: Usage | None = None,
        steps: int = 0,
        failure: FailureKind | None = None,
        attempts: int = 1,
        denials: Sequence[Denial] = (),
        evidence: Sequence[ToolEvidence] = (),
    ) -> TaskResult:
        """The result of `task`: failed, a success or partial.

        It failed when a `failure` is given; it is a success when it has
        findings and no errors, else partial.
        """
        status: TaskStatus = (
            "failed" if failure else "success" if findings and not errors else "partial"
        )
        return cls(
            task_id=task.task_id,
            agent_id=task.agent_id,
            facet_id=task.facet_id,
            round=task.round,
            values=task.values,
            status=status,
            findings=tuple(findings),
            errors=tuple(errors),
            started_at=started_at,
            execution_time_s=seconds,
            confidence=max((f.confidence for f in findings), default=0.0),
            tokens=usage.tokens if usage else 0,
            context_tokens=usage.context if usage else 0,
            calls=usage.calls if usage else 0,
            steps=steps,
            failure=failure,
            attempts=attempts,
            denials=tuple(denials),
            evidence=tuple(evidence),
        )


def tool_evidence(results: Iterable[TaskResult]) -> dict[str, ToolEvidence]:
    """The tool evidence the results' findings cite, by evidence id."""
    return {e.evidence_id: e for r in results for e in r.evidence}
