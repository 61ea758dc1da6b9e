"""One subagent run as a graph, the coordinator's and Studio's.

The coordinator's fan-out runs it per task, and langgraph.json exports it as
`subagent`, to run and inspect one subagent by hand.

START -> prepare_task -> subagent -> END

From the coordinator it gets a task; by hand (Studio), a question, the values to
cover and, optionally, the agent. Only its result and events leave it.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from nodes.prepare_task import prepare_task
from nodes.subagent import subagent
from runtime.context import Context
from state.graph import SubagentInput, SubagentOutput, SubagentState

builder = StateGraph(
    SubagentState,
    context_schema=Context,
    input_schema=SubagentInput,
    output_schema=SubagentOutput,
)
builder.add_node("prepare_task", prepare_task)
builder.add_node("subagent", subagent)
builder.add_edge(START, "prepare_task")
builder.add_edge("prepare_task", "subagent")
builder.add_edge("subagent", END)

graph = builder.compile(name="subagent")
