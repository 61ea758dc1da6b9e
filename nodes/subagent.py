"""subagent: run one task in its agent's isolated subgraph; return only a result.

A task escalates inside its own branch when it fails once too often for its
facet, or when a gate sent one of its tool calls to a person: `interrupt()`
with a HandoffSummary while its sibling branches finish. The person's decision
runs it once more (retry, which also approves the tool call; or a hint added to
its brief), leaves it as it is (skip), or also stops the run (abort). With
`on_escalation="skip"`, or no checkpointer to pause on, it is skipped.

Its events reach the `custom` stream as they happen; those of a task that
escalates, once the person has decided (the node runs again up to the question
when the run resumes, and would send them twice).
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from runtime.context import Context
from runtime.durable import can_pause
from runtime.escalation import ask_person
from runtime.telemetry import emit
from state.events import Event
from state.graph import SubagentInput, SubagentOutput
from state.handoff import Action, Decision, HandoffSummary
from state.tasks import TaskDefinition, TaskResult
from subagents.run import settled_task


async def subagent(state: SubagentInput, runtime: Runtime[Context]) -> SubagentOutput:
    """Run the task (its attempts replayed on resume); escalate if it must."""
    ctx, task = runtime.context, state["task"]
    events: list[Event] = [delegated(task)]
    result = await settled_task(task)
    handoff = escalation(task, result, ctx)
    if handoff is None:
        events += outcome(task, result)
    else:
        pausable = can_pause(runtime)
        if ctx.on_escalation == "interrupt" and pausable:
            decision = ask_person(handoff)
        else:
            decision = Decision(action="skip")
        # emitted once decided: a resumed branch runs again up to its question
        events += outcome(task, result)
        events.append(
            emit(
                "ESCALATE",
                task_id=task.task_id,
                agent=task.agent_id,
                reason=handoff.reason,
                decision=decision.action,
                asked=ctx.on_escalation == "interrupt" and pausable,
            )
        )
        if decision.action in ("retry", "hint"):
            again = once_more(task, result, decision)
            events.append(delegated(again))
            result = await settled_task(again)
            events += outcome(again, result)
        else:
            note = "a person aborted the run" if decision.action == "abort" else None
            result = result.model_copy(
                update={"errors": (*result.errors, note or "escalated and skipped")}
            )
        result = result.model_copy(update={"escalation": decision.action})
    return {"results": {task.task_id: result}, "events": events}


def delegated(task: TaskDefinition) -> Event:
    """The DELEGATE event of a task."""
    return emit(
        "DELEGATE",
        task_id=task.task_id,
        agent=task.agent_id,
        route=task.route or None,
        objective=task.brief,
        timeout=task.timeout_s,
        attempts=task.max_attempts,
        round=task.round,
        values=", ".join(task.values),
    )


def outcome(task: TaskDefinition, result: TaskResult) -> list[Event]:
    """A GATE event per denied tool call, a RETRY event per retry, its RESULT."""
    gated = [
        emit(
            "GATE",
            task_id=task.task_id,
            agent=task.agent_id,
            tool=denial.tool,
            rule=denial.rule,
            reason=denial.reason,
            args=denial.args,
        )
        for denial in result.denials
    ]
    retries = [
        emit(
            "RETRY",
            task_id=task.task_id,
            agent=task.agent_id,
            attempt=number,
            of=task.max_attempts,
        )
        for number in range(2, result.attempts + 1)
    ]
    done = emit(
        "RESULT",
        task_id=task.task_id,
        agent=task.agent_id,
        status=result.status,
        exec=f"{result.execution_time_s:.1f}s",
        confidence=result.confidence,
        findings=len(result.findings),
        attempts=result.attempts,
        tokens=result.tokens,
        round=task.round,
        values=", ".join(task.values),
        error=result.errors[0] if result.errors else None,
    )
    return [*gated, *retries, done]


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
