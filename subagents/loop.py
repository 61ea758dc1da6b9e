"""The subagent loop: one graph, one shape, whatever drives it.

    START -> act --calls--> tools --> act ... --answer--> answer -> END
             act --finished--> END

`act` asks the agent's driver for its next move: tool calls, a finished
answer, or "answer now". `tools` runs the calls through the agent's gates and
numbers what they show into the evidence ledger. `answer` asks the driver for
the findings it owes, which code checks. Three drivers share the loop: a model
calling tools natively (`subagents.llm_agent`), a model taking one JSON step a
turn (`subagents.json_agent`), and fixed rules with no model
(`subagents.extractive_agent`).

The loop is compiled once. What differs per agent (its definition, driver,
tools, gates and knowledge base) is the `Loop` each attempt passes as the
loop's context, so Studio draws the same nodes for every subagent, and
`get_graph(xray=True)` of the research graph shows them inside `subagent`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import ValidationError

from runtime.kb import KnowledgeBase
from runtime.reliability import CONTROL_FLOW, describe, failure_kind, is_transient
from runtime.sources import Sources
from state.agents import AgentManifest
from state.denials import Denial
from state.evidence import ToolEvidence
from state.findings import Finding
from state.tasks import FailureKind, TaskDefinition
from subagents.budget import wrap_up_reason
from subagents.evidence import Excerpt, Ledger, record, shown_more
from subagents.gates import Gates
from subagents.state import AgentInput, AgentOutput, AgentState
from subagents.tools import call_tool

STEPS_PER_TURN = 2
"""A turn is the driver's move and the tool step that runs it."""


@dataclass(frozen=True)
class Move:
    """What a driver does next.

    Attributes:
        calls: The tool calls it makes (its message holds them); None if none.
        output: Its finished output (findings, errors, steps): the loop ends.
        update: State it adds along with the calls (tokens spent).
    """

    calls: AIMessage | None = None
    output: dict[str, object] | None = None
    update: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Refusal:
    """A call a driver will not run, what the agent is told, and if it must answer."""

    text: str
    final: bool = False


ANSWER_NOW = Move()
"""The move of a driver with no more calls to make: it answers next."""


class Driver(Protocol):
    """How an agent acts in the loop: by a model's tool calls, JSON steps, or rule."""

    def turns(self, manifest: AgentManifest, task: TaskDefinition) -> int:
        """How many turns the agent may take on the task."""
        ...

    async def act(self, state: AgentState, loop: Loop) -> Move:
        """The agent's next move."""
        ...

    def refuse(self, call: ToolCall, state: AgentState) -> Refusal | None:
        """Why a call that passed the gates is not run (a search made twice)."""
        ...

    async def answer(
        self, state: AgentState, loop: Loop, reason: str | None
    ) -> dict[str, object]:
        """The agent's checked output; `reason` is why its budget ran out."""
        ...


@dataclass(frozen=True)
class Loop:
    """What one agent brings to the loop: the loop's context.

    Attributes:
        manifest: The agent's definition.
        driver: How it acts.
        tools: The tools it may be given, by name.
        gates: The checks its tool calls pass.
        kb: The knowledge base its findings are checked against.
    """

    manifest: AgentManifest
    driver: Driver
    tools: Mapping[str, BaseTool]
    gates: Gates
    kb: KnowledgeBase

    def sources(self, state: AgentState) -> Sources:
        """Where the agent's findings are looked up: the KB and its tool evidence."""
        return Sources(self.kb, state["recorded"])

    def recursion_limit(self, task: TaskDefinition) -> int:
        """Steps for the task's turns and the answer, with one to spare.

        LangGraph's `RemainingSteps` counts down from this limit; the loop
        stops calling tools when another turn would leave no step to answer.
        """
        return STEPS_PER_TURN * self.driver.turns(self.manifest, task) + 2

    async def run(
        self, start: AgentInput, config: RunnableConfig | None = None
    ) -> AgentOutput:
        """Run the agent loop from `start` with this agent."""
        limit: RunnableConfig = {"recursion_limit": self.recursion_limit(start["task"])}
        output = await agent_loop.ainvoke(
            start, merge_configs(config, limit), context=self
        )
        return cast(AgentOutput, output)


def tool_calls_made(state: AgentState) -> int:
    """The tool calls the agent has made: each answered by one tool message."""
    return sum(isinstance(m, ToolMessage) for m in state["messages"])


def spent(state: AgentState) -> str | None:
    """Why the agent must answer now, or None while its budget lasts."""
    return wrap_up_reason(state, tool_calls_made(state))


async def act(
    state: AgentState, runtime: Runtime[Any]
) -> Command[Literal["tools", "answer", "__end__"]]:
    """The driver's move: run its calls, take its output, or ask it to answer."""
    if spent(state) is not None:
        return Command(goto="answer")
    loop: Loop = runtime.context
    move = await loop.driver.act(state, loop)
    if move.output is not None:
        output = with_evidence(move.output, state)
        return Command(update={**move.update, **output}, goto="__end__")
    if move.calls is None:
        return Command(update=move.update, goto="answer")
    update = {**move.update, "messages": [move.calls]}
    cap = state["budget"].tool_calls
    if cap and tool_calls_made(state) >= cap:
        return Command(update=update, goto="answer")
    return Command(update=update, goto="tools")


async def tools(
    state: AgentState, runtime: Runtime[Any]
) -> Command[Literal["act", "answer"]]:
    """Run the last move's calls, each gated; number what they show."""
    loop: Loop = runtime.context
    calls = state["messages"][-1]
    assert isinstance(calls, AIMessage)
    ledger, shown = state["evidence"], Ledger()
    recorded: dict[str, ToolEvidence] = {}
    answered: list[ToolMessage] = []
    denials: list[Denial] = []
    refused = False
    failed: list[tuple[str, FailureKind]] = []
    for call in calls.tool_calls:
        seen = shown_more(ledger, shown)
        denial = loop.gates.check(state["task"], call["name"], call["args"], seen)
        if denial is not None:
            denials.append(denial)
            answered.append(said(call, denial.message(), error=True))
            continue
        refusal = loop.driver.refuse(call, state)
        if refusal is not None:
            refused = refused or refusal.final
            answered.append(said(call, refusal.text, error=True))
            continue
        message, failure = await run(loop, call, state, seen)
        if failure is not None:
            failed.append((str(message.content), failure))
        if message.artifact is not None:
            excerpts: list[Excerpt] = message.artifact
            text, more = record(seen, excerpts)
            shown = shown_more(shown, more)
            recorded |= {e["passage_id"]: e["record"] for e in excerpts if e["record"]}
            message = message.model_copy(update={"content": text})
        answered.append(message)
    after: AgentState = {**state, "messages": [*state["messages"], *answered]}
    room = state["remaining_steps"] > STEPS_PER_TURN + 1
    going_on = room and not refused and spent(after) is None
    update: dict[str, object] = {
        "messages": answered,
        "evidence": shown,
        "denials": denials,
        "recorded": recorded,
    }
    if failed:
        update["errors"] = [text for text, _ in failed]
        update["tool_failure"] = failed[-1][1]
    return Command(update=update, goto="act" if going_on else "answer")


async def run(
    loop: Loop, call: ToolCall, state: AgentState, seen: Ledger
) -> tuple[ToolMessage, FailureKind | None]:
    """One tool call's message, and the kind of its failure if the tool raised.

    Arguments a tool refuses come back as an error. So does an exception a
    tool raises (a user tool's bug, a dropped MCP session), as LangGraph's
    ToolNode does: the agent may try again, and the evidence it already holds
    is not lost. A transient one (a timeout, a lost connection) fails the
    attempt instead, which its retry policy tries again.
    """
    tool = loop.tools.get(call["name"])
    if tool is None:
        return said(call, f"no tool {call['name']!r}", error=True), None
    given = {"task": state["task"], "evidence": seen}
    try:
        message = await call_tool(tool, call["args"], given, call["id"] or call["name"])
    except ValidationError as err:
        return said(call, f"invalid arguments: {describe(err)}", error=True), None
    except Exception as err:
        if isinstance(err, CONTROL_FLOW) or is_transient(err):
            raise
        text = f"{call['name']} failed: {describe(err)}"
        return said(call, text, error=True), failure_kind(err)
    return message, None


def said(call: ToolCall, text: str, *, error: bool = False) -> ToolMessage:
    """A tool message answering `call` with `text`."""
    return ToolMessage(
        text,
        tool_call_id=call["id"] or call["name"],
        name=call["name"],
        status="error" if error else "success",
    )


async def answer(state: AgentState, runtime: Runtime[Any]) -> dict[str, object]:
    """The driver's checked answer, told why it must answer if its budget ran out."""
    loop: Loop = runtime.context
    return with_evidence(await loop.driver.answer(state, loop, spent(state)), state)


def with_evidence(output: dict[str, object], state: AgentState) -> dict[str, object]:
    """The output with the tool evidence its findings cite, as code recorded it.

    An answer of no findings after a tool raised failed as that tool did.
    """
    findings = cast(list[Finding], output.get("findings", []))
    cited = {f.source.passage_id for f in findings}
    recorded = state["recorded"]
    failure = output.get("failure") or (None if findings else state.get("tool_failure"))
    return {
        **output,
        "cited": [recorded[i] for i in cited if i in recorded],
        "failure": failure,
    }


def build_loop() -> StateGraph[AgentState, Any, AgentInput, AgentOutput]:
    """The loop's graph, uncompiled."""
    builder = StateGraph(
        AgentState,
        context_schema=Loop,
        input_schema=AgentInput,
        output_schema=AgentOutput,
    )
    builder.add_node("act", act, destinations=("tools", "answer", END))
    builder.add_node("tools", tools, destinations=("act", "answer"))
    builder.add_node("answer", answer)
    builder.add_edge(START, "act")
    builder.add_edge("answer", END)
    return builder


AgentLoop = CompiledStateGraph[AgentState, Any, AgentInput, AgentOutput]

agent_loop: AgentLoop = build_loop().compile(name="agent", checkpointer=False)
"""The loop every subagent attempt runs: never checkpointed, each attempt fresh."""

drawn_loop: AgentLoop = build_loop().compile(name="agent")
"""The same loop as Studio and `get_graph(xray=True)` draw it inside `subagent`.

LangGraph draws only subgraphs that may checkpoint; the loop that runs does
not, so that a retried attempt starts from its brief again.
"""
