"""subagent: run one task in its agent's isolated subgraph; return only a result.

Its events reach the `custom` stream as they happen. A task that must go to a
person (`roles.escalation`) goes on to its own `escalate` branch, so the
person's wait holds up no sibling and a resumed run never runs it again.
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from roles.escalation import escalation
from runtime.context import Context
from runtime.telemetry import delegated, outcome
from state.graph import SubagentInput, SubagentOutput
from subagents.run import run_task


async def subagent(
    state: SubagentInput, runtime: Runtime[Context]
) -> SubagentOutput | Command[str]:
    """Run the task; send it on to `escalate` if a person must decide on it."""
    task = state["task"]
    result = await run_task(task)
    update: SubagentOutput = {
        "results": {task.task_id: result},
        "events": [delegated(task), *outcome(task, result)],
    }
    handoff = escalation(task, result, runtime.context)
    if handoff is None:
        return update
    waiting = result.model_copy(update={"escalation": "pending"})
    update["results"] = {task.task_id: waiting}
    sent = {"task": task, "result": result, "handoff": handoff}
    return Command(update=update, goto=Send("escalate", sent))
