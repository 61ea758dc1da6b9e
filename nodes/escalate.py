"""escalate: a person decides on one task that cannot go on by itself.

The branch pauses with `interrupt()` and its HandoffSummary once the round's
other tasks have finished; several escalations of a round wait side by side,
each answered on its own. The person's decision runs the task once more
(retry, which also approves a tool call a gate held; or a hint added to its
brief), leaves it as it is (skip), or also stops the run (abort). With
`on_escalation="skip"`, or no checkpointer to pause on, it is skipped.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from roles.escalation import left_as_is, once_more
from runtime.context import Context
from runtime.durable import can_pause
from runtime.escalation import ask_person
from runtime.telemetry import delegated, emit, outcome
from state.graph import EscalationInput, SubagentOutput
from state.handoff import Decision
from subagents.run import run_task


async def escalate(state: EscalationInput, runtime: Runtime[Context]) -> SubagentOutput:
    """Ask a person about the task, then act on the decision."""
    task, result, handoff = state["task"], state["result"], state["handoff"]
    asked = runtime.context.on_escalation == "interrupt" and can_pause(runtime)
    decision = ask_person(handoff) if asked else Decision(action="skip")
    events = [
        emit(
            "ESCALATE",
            task_id=task.task_id,
            agent=task.agent_id,
            reason=handoff.reason,
            decision=decision.action,
            asked=asked,
        )
    ]
    if decision.action in ("retry", "hint"):
        again = once_more(task, result, decision)
        events.append(delegated(again))
        result = await run_task(again)
        events += outcome(again, result)
    else:
        result = left_as_is(result, decision)
    result = result.model_copy(update={"escalation": decision.action})
    return {"results": {task.task_id: result}, "events": events}
