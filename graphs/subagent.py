"""One subagent run as a graph, to run and inspect one subagent by hand.

langgraph.json exports it as `subagent`. Its `subagent` node is the one each
branch of the coordinator's fan-out runs.

START -> prepare_task -> subagent -> END   (a given task goes straight to subagent)
                         subagent = the agent loop (act -> tools -> ... -> answer)
subagent --a person must decide--> (Send) -> escalate -> END

It takes a question, the values to cover and, optionally, the agent; or a task
as the coordinator would send it. Only its result and events leave it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel

from nodes.escalate import escalate
from nodes.prepare_task import prepare_task
from nodes.subagent import subagent
from runtime.context import Context
from state.graph import EscalationInput, SubagentInput, SubagentOutput, SubagentState
from subagents.loop import drawn_loop

G = TypeVar("G", bound=Pregel[Any, Any, Any, Any])


def drawing_the_loop(app: G) -> G:
    """`app` with the agent loop drawn inside its `subagent` node.

    The loop runs inside the node's durable attempts, where LangGraph cannot
    see it; naming it here lets `get_graph(xray=True)` and Studio draw it.
    """
    app.nodes["subagent"].subgraphs = [drawn_loop]
    return app


def sent_or_by_hand(state: SubagentInput) -> Literal["prepare_task", "subagent"]:
    """A task given whole runs at once; a question and values are prepared first."""
    return "subagent" if "task" in state else "prepare_task"


builder = StateGraph(
    SubagentState,
    context_schema=Context,
    input_schema=SubagentInput,
    output_schema=SubagentOutput,
)
builder.add_node("prepare_task", prepare_task)
builder.add_node("subagent", subagent, destinations=("escalate",))
builder.add_node("escalate", escalate, input_schema=EscalationInput)
builder.add_conditional_edges(START, sent_or_by_hand, ["prepare_task", "subagent"])
builder.add_edge("prepare_task", "subagent")
builder.add_edge("subagent", END)
builder.add_edge("escalate", END)

graph = drawing_the_loop(builder.compile(name="subagent"))
