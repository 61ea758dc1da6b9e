"""When a task goes to a person, what they are shown, and what runs again.

A task escalates when it fails once too often for its facet, or when a gate
sent one of its tool calls to a person. The person retries it (which also
approves the tool call), adds a hint to its brief, skips it, or aborts the
run.
"""

from __future__ import annotations

from collections.abc import Iterable

from runtime.context import Context
from state.handoff import Action, Decision, HandoffSummary
from state.tasks import TaskDefinition, TaskResult


def escalation(
    task: TaskDefinition, result: TaskResult, ctx: Context
) -> HandoffSummary | None:
    """What to show a person about this task, or None if it need not escalate."""
    for denial in result.denials:
        if denial.needs_person:
            return handoff_for(task, result).model_copy(
                update={
                    "reason": f"{task.agent_id} asked for {denial.tool}"
                    f"({denial.args}), which needs a person's approval: "
                    f"{denial.reason}",
                    "recommended_action": "skip",
                }
            )
    if result.status == "failed" and task.failures + 1 >= ctx.escalate_after:
        return handoff_for(task, result)
    return None


def awaiting_person(results: Iterable[TaskResult]) -> bool:
    """Whether a task of the round still waits for a person's decision."""
    return any(r.escalation == "pending" for r in results)


def handoff_for(task: TaskDefinition, result: TaskResult) -> HandoffSummary:
    """What a person is shown about a task that cannot go on by itself."""
    why = result.errors[0] if result.errors else "no reason given"
    recommended: Action = (
        "retry"
        if result.failure in ("timeout", "unreachable")
        else "hint"
        if result.failure == "invalid output"
        else "skip"
    )
    return HandoffSummary(
        reason=f"{task.agent_id} failed {task.failures + 1} task(s) on facet "
        f"{task.facet_id}: {why}",
        question=task.question,
        task_id=task.task_id,
        agent=task.agent_id,
        brief=task.brief,
        values=task.values,
        attempted=(
            *task.earlier,
            f"round {task.round}: {result.attempts} attempt(s) by {task.agent_id}",
        ),
        errors=result.errors,
        partial_findings=tuple(f.claim for f in result.findings),
        recommended_action=recommended,
    )


def once_more(
    task: TaskDefinition, result: TaskResult, decision: Decision
) -> TaskDefinition:
    """The task to run again: with the person's hint, or the tools they approved."""
    update: dict[str, object] = {
        "failures": task.failures + (result.status == "failed")
    }
    if decision.action == "retry":
        asked = {d.tool for d in result.denials if d.needs_person}
        update["approved_tools"] = tuple(sorted({*task.approved_tools, *asked}))
    return task.with_hint(decision.hint).model_copy(update=update)


def left_as_is(result: TaskResult, decision: Decision) -> TaskResult:
    """The result of a task a person skipped, or whose run they aborted."""
    note = "a person aborted the run" if decision.action == "abort" else None
    return result.model_copy(
        update={"errors": (*result.errors, note or "escalated and skipped")}
    )
