"""Escalation to a person: what they are shown, and what they may answer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Action = Literal["retry", "skip", "hint", "abort"]
ACTIONS: tuple[Action, ...] = ("retry", "skip", "hint", "abort")


class HandoffSummary(BaseModel):
    """Everything a person needs to decide how a stuck branch or run goes on.

    Attributes:
        reason: Why it cannot go on by itself.
        urgency: "branch" when one subagent's branch waits (its siblings have
            finished), "run" when the coordinator does.
        question: The question of the run.
        task_id: The waiting task, empty for the coordinator.
        agent: The agent that failed, empty for the coordinator.
        brief: The waiting task's brief; empty for the coordinator.
        values: The dimension values at stake.
        attempted: What was tried, in order.
        errors: The errors met, latest last.
        partial_findings: Claims found so far, if any.
        recommended_action: What delegator would do.
        options: The decisions it accepts.
    """

    model_config = ConfigDict(frozen=True)

    reason: str
    urgency: Literal["branch", "run"] = "branch"
    question: str
    task_id: str = ""
    agent: str = ""
    brief: str = ""
    values: tuple[str, ...] = ()
    attempted: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    partial_findings: tuple[str, ...] = ()
    recommended_action: Action = "skip"
    options: tuple[Action, ...] = ACTIONS
    problem: str | None = Field(
        default=None, description="Why the last answer was not a decision."
    )


class Decision(BaseModel):
    """A person's answer to a handoff.

    retry runs the branch (or another round) once more; hint does so with the
    person's note added to the brief; skip leaves it failed (or the run as it
    is); abort also stops the run from delegating anything more.
    """

    model_config = ConfigDict(frozen=True)

    action: Action
    hint: str = Field(default="", max_length=2000)


class DecisionError(ValueError):
    """A resume value that is not a decision."""


def read_decision(value: Any) -> Decision:
    """A decision from a resume value: "skip", "hint: ...", or {"action": ...}."""
    if isinstance(value, str):
        action, _, hint = value.partition(":")
        value = {"action": action.strip().lower(), "hint": hint.strip()}
    try:
        decision = Decision.model_validate(value)
    except ValidationError as err:
        raise DecisionError(
            f"not a decision: {value!r}; answer one of {', '.join(ACTIONS)} "
            '(a hint as "hint: <text>")'
        ) from err
    if decision.action == "hint" and not decision.hint:
        raise DecisionError("a hint needs its text: answer 'hint: <text>'")
    return decision
