"""One subagent run as a graph, the coordinator's and Studio's.

The coordinator's fan-out runs it per task, and langgraph.json exports it as
`subagent`, to run and inspect one subagent by hand.

START -> prepare_task -> subagent -> END   (a sent task goes straight to subagent)

From the coordinator it gets a task; by hand (Studio), a question, the values to
cover and, optionally, the agent. Only its result and events leave it.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from nodes.prepare_task import prepare_task
from nodes.subagent import subagent
from runtime.context import Context
from state.graph import SubagentInput, SubagentOutput, SubagentState


def sent_or_by_hand(state: SubagentInput) -> Literal["prepare_task", "subagent"]:
    """A task the fan-out sent runs at once; a run by hand is prepared first."""
    return "subagent" if "task" in state else "prepare_task"


builder = StateGraph(
    SubagentState,
    context_schema=Context,
    input_schema=SubagentInput,
    output_schema=SubagentOutput,
)
builder.add_node("prepare_task", prepare_task)
builder.add_node("subagent", subagent)
builder.add_conditional_edges(START, sent_or_by_hand, ["prepare_task", "subagent"])
builder.add_edge("prepare_task", "subagent")
builder.add_edge("subagent", END)

graph = builder.compile(name="subagent")
