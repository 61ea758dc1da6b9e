"""A subagent subgraph's private state, and what goes in and comes out of it."""

from __future__ import annotations

import operator
from typing import Annotated

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.managed import RemainingSteps
from typing_extensions import TypedDict

from state.findings import Finding
from state.tasks import FailureKind, TaskDefinition


class AgentInput(TypedDict):
    """What a subagent starts from: `[system prompt, brief]` and its task."""

    messages: list[AnyMessage]
    task: TaskDefinition


class AgentOutput(TypedDict):
    """All that leaves a subagent: checked findings and what it cost.

    Attributes:
        findings: Typed findings that passed the answer checks.
        errors: Why the others were refused, or why no answer came.
        steps: Model turns and tool calls.
        failure: Why it failed, when its answer never validated.
    """

    findings: list[Finding]
    errors: list[str]
    steps: int
    failure: FailureKind | None


class AgentState(TypedDict):
    """A subagent's private state; its messages never reach the coordinator.

    Attributes:
        messages: The subagent's own conversation, starting at its brief.
        task: The task it works on.
        findings: Typed findings, set when it answers.
        errors: What went wrong along the way (bad quotes, unknown passages).
        steps: Model turns and tool calls, set when it answers.
        failure: Why it failed, when its answer never validated.
        remaining_steps: LangGraph's count of steps left before the turn cap.
    """

    messages: Annotated[list[AnyMessage], add_messages]
    task: TaskDefinition
    findings: list[Finding]
    errors: Annotated[list[str], operator.add]
    steps: int
    failure: FailureKind | None
    remaining_steps: RemainingSteps
