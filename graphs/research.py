"""The coordinator graph, exported as `graph` for langgraph.json.

START -> dispatch -> approve_plan -> (Send x N) -> subagent -> aggregate -> verify
subagent --a person must decide--> (Send) -> escalate -> aggregate
verify -> gap_check --gaps--> (Send x M) -> subagent      (re-delegation)
gap_check --covered / no gain / max_rounds / budget--> write -> END
approve_plan --direct answer--> aggregate   (checked like any other findings)

aggregate goes on to verify once no task of the round waits for a person;
until then escalate's edge brings the run back to it.

approve_plan passes the plan through unless a person is to review it. Each
`subagent` branch runs the node that the `subagent` graph runs by hand: the
agent loop (`subagents.loop`), drawn inside it with `xray`.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from graphs.subagent import drawing_the_loop
from nodes.aggregate import aggregate
from nodes.approve_plan import approve_plan
from nodes.dispatch import dispatch
from nodes.escalate import escalate
from nodes.gap_check import gap_check
from nodes.subagent import subagent
from nodes.verify import verify
from nodes.write import write
from roles.escalation import awaiting_person
from runtime.context import Context
from state.graph import (
    EscalationInput,
    InputState,
    OutputState,
    ResearchState,
    SubagentInput,
)


def delegate(state: ResearchState) -> list[Send]:
    """One `Send` per pending task; each subagent gets only its task."""
    return [Send("subagent", {"task": task}) for task in state.get("pending", [])]


def after_approval(state: ResearchState) -> list[Send] | Literal["aggregate"]:
    """Fan out the plan's tasks; a direct answer goes straight to aggregation."""
    return delegate(state) or "aggregate"


def after_aggregate(state: ResearchState) -> Literal["verify", "a person decides"]:
    """Verify the round's findings, unless a task of it still waits for a person.

    Waiting, this path ends: the task's `escalate` branch comes back here.
    """
    if awaiting_person(state.get("results", {}).values()):
        return "a person decides"
    return "verify"


def after_gap_check(state: ResearchState) -> list[Send] | Literal["write"]:
    """Re-delegate the gaps gap_check queued, or write the report."""
    return delegate(state) or "write"


builder = StateGraph(
    ResearchState,
    context_schema=Context,
    input_schema=InputState,
    output_schema=OutputState,
)
builder.add_node("dispatch", dispatch)
builder.add_node("approve_plan", approve_plan)
builder.add_node(
    "subagent", subagent, input_schema=SubagentInput, destinations=("escalate",)
)
builder.add_node("escalate", escalate, input_schema=EscalationInput)
builder.add_node("aggregate", aggregate)
builder.add_node("verify", verify)
builder.add_node("gap_check", gap_check)
builder.add_node("write", write)
builder.add_edge(START, "dispatch")
builder.add_edge("dispatch", "approve_plan")
builder.add_conditional_edges("approve_plan", after_approval, ["subagent", "aggregate"])
builder.add_edge("subagent", "aggregate")
builder.add_edge("escalate", "aggregate")
builder.add_conditional_edges(
    "aggregate", after_aggregate, {"verify": "verify", "a person decides": END}
)
builder.add_edge("verify", "gap_check")
builder.add_conditional_edges("gap_check", after_gap_check, ["subagent", "write"])
builder.add_edge("write", END)


class ResearchGraph(
    CompiledStateGraph[ResearchState, Context, InputState, OutputState]
):
    """The compiled graph, keeping its checkpoint allowlist when copied.

    Compiling under `LANGGRAPH_STRICT_MSGPACK=true` registers the state's types
    for checkpoint deserialization, but `copy()` (which LangGraph Server uses to
    attach its checkpointer) drops that registration, and a resumed thread
    would read its results back as plain dicts.
    """

    def copy(self, update: dict[str, Any] | None = None) -> ResearchGraph:
        """A copy with `update` applied, registration included."""
        copied = super().copy(update)
        copied._serde_allowlist = self._serde_allowlist
        return copied


def compiled(checkpointer: BaseCheckpointSaver[Any] | None = None) -> ResearchGraph:
    """The research graph, compiled on `checkpointer` (the CLI's, a benchmark's)."""
    app = drawing_the_loop(builder.compile(checkpointer=checkpointer, name="research"))
    app.__class__ = ResearchGraph
    return cast(ResearchGraph, app)


graph = compiled()
"""The graph langgraph.json exports: the server attaches its own checkpointer."""

PLANNED = "dispatch"
"""The node after which a run's plan and first tasks are in its state."""
FINISHED = "write"
"""The node after which a run is over: a new question starts afresh."""


def continues_after(upcoming: str | None, round_no: int) -> str:
    """The node a copied state is written as, so the run goes on at `upcoming`.

    Read off the graph's edges: the node whose update leads to `upcoming`. A
    fan-out follows the plan's approval in round 0 and the gap check after; a
    copy taken while a task waits for a person sends its round out again (the
    `Send` to `escalate` is not part of the state a copy holds).
    """
    if upcoming in ("subagent", "escalate"):
        return "approve_plan" if round_no == 0 else "gap_check"
    before = {
        end: source
        for source, branches in builder.branches.items()
        for spec in branches.values()
        for end in (spec.ends or {}).values()
    }
    before |= {end: source for source, end in builder.edges if source != START}
    return before.get(upcoming or END, FINISHED)
