"""A subagent subgraph's private state, and what goes in and comes out of it."""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langgraph.graph.message import add_messages
from langgraph.managed import RemainingSteps
from pydantic import BaseModel
from typing_extensions import TypedDict

from state.budget import Budget
from state.denials import Denial
from state.evidence import ToolEvidence
from state.findings import Finding
from state.tasks import FailureKind, TaskDefinition
from subagents.contract import brief, pointing_schema
from subagents.evidence import Ledger, shown_more


class AgentInput(TypedDict):
    """What a subagent starts from: `[system prompt, brief]`, its task and budget.

    Attributes:
        messages: The system prompt and the brief.
        task: The task it works on.
        budget: Its token, time and tool-call envelope.
        started_at: When it started (seconds since the epoch), for its budget.
        evidence: Its evidence ledger, empty: no passage shown yet.
        recorded: Tool evidence from outside the knowledge base, none yet.
    """

    messages: list[AnyMessage]
    task: TaskDefinition
    budget: Budget
    started_at: float
    evidence: Ledger
    recorded: dict[str, ToolEvidence]


def agent_input(
    system_prompt: str, task: TaskDefinition, budget: Budget | None = None
) -> AgentInput:
    """A fresh start: the system prompt and the task's brief, its budget from now."""
    return {
        "messages": [SystemMessage(system_prompt), HumanMessage(brief(task))],
        "task": task,
        "budget": budget or task.budget,
        "started_at": time.time(),
        "evidence": {},
        "recorded": {},
    }


class AgentOutput(TypedDict):
    """All that leaves a subagent: checked findings and what it cost.

    Attributes:
        findings: Typed findings that passed the answer checks.
        errors: Why the others were refused, or why no answer came.
        steps: Model turns and tool calls.
        failure: Why it failed, when its answer never validated.
        denials: Tool calls its gates refused.
        cited: The tool evidence its findings cite, as code recorded it.
    """

    findings: list[Finding]
    errors: list[str]
    steps: int
    failure: FailureKind | None
    denials: list[Denial]
    cited: list[ToolEvidence]


class AgentState(TypedDict):
    """A subagent's private state; its messages never reach the coordinator.

    Attributes:
        messages: The subagent's own conversation, starting at its brief.
        task: The task it works on.
        findings: Typed findings, set when it answers.
        errors: What went wrong along the way (bad quotes, unknown passages).
        steps: Model turns and tool calls, set when it answers.
        failure: Why it failed, when its answer never validated.
        budget: Its token, time and tool-call envelope.
        started_at: When it started (seconds since the epoch).
        tokens: Model tokens spent so far.
        evidence: Its ledger: the passages its tools showed, in handle order
            (E1 is the first), and the sentences shown of each; only code
            writes it.
        denials: Tool calls its gates refused.
        recorded: What its tools returned from outside the knowledge base, by
            evidence id; only code writes it.
        cited: The tool evidence its findings cite, set when it answers.
        tool_failure: The kind of the last tool call that raised, when one did:
            the task's failure if it then finds nothing.
        remaining_steps: LangGraph's count of steps left before the turn cap.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: TaskDefinition
    budget: Budget
    started_at: float
    tokens: Annotated[int, operator.add]
    evidence: Annotated[Ledger, shown_more]
    denials: Annotated[list[Denial], operator.add]
    recorded: Annotated[dict[str, ToolEvidence], operator.or_]
    cited: list[ToolEvidence]
    findings: list[Finding]
    errors: Annotated[list[str], operator.add]
    steps: int
    failure: FailureKind | None
    tool_failure: FailureKind | None
    remaining_steps: RemainingSteps


def pointing(schema: type[BaseModel], state: AgentState) -> dict[str, Any]:
    """`schema` as the server enforces it now: only handles and sentences shown."""
    return pointing_schema(schema, state["evidence"], len(state["task"].values))
