"""Extractive mode: a subagent calls the same tools by fixed rules, no model.

For each value it searches, reads the passages that carry most of the
question's and the value's words, and points at their best sentences, until
its budget of tool calls or time is nearly spent. Its findings go through the
same contract as a model's (`subagents.contract`): evidence handles and
sentence numbers, which code resolves into quotes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from runtime.kb import KnowledgeBase
from runtime.text import terms
from state.agents import AgentManifest
from state.denials import Denial
from state.tasks import TaskDefinition
from subagents.budget import wrap_up_reason, wrapped_up
from subagents.contract import ClaimedFinding, SubagentAnswer, check_answer
from subagents.evidence import Excerpt, Ledger, handle_of, record, shown_more
from subagents.gates import Gates
from subagents.reading import best_sentences, idf_weights
from subagents.registry import DefinitionError
from subagents.state import AgentInput, AgentOutput, AgentState
from subagents.tools import call_tool, make_tools

PASSAGES_READ_PER_VALUE = 3
OPENING_CHARS = 500
"""How much of a passage's opening tells which search hits to read."""


@dataclass
class Reading:
    """One task's reading: its task, tool calls so far, ledger, what gates refused."""

    task: TaskDefinition
    log: list[AnyMessage] = field(default_factory=list)
    evidence: Ledger = field(default_factory=dict)
    denials: list[Denial] = field(default_factory=list)


def build_extractive_agent(
    manifest: AgentManifest, kb: KnowledgeBase, findings_per_value: int, gates: Gates
) -> CompiledStateGraph[AgentState, None, AgentInput, AgentOutput]:
    """The agent's tools, called by rule: search each value, read, cut sentences.

    Its calls pass the gates like a model's would.
    """
    tools = make_tools(kb)
    missing = {"search", "read"} - set(manifest.allowed_tools)
    if missing:
        raise DefinitionError(
            f"extractive mode needs tools {sorted(missing)}, which "
            f"{manifest.agent_id!r} may not use"
        )
    call_ids = itertools.count()

    def call(name: str, args: dict[str, object], run: Reading) -> list[Excerpt]:
        """Call a tool as a model would, gated, logging the request and the answer.

        What it showed is numbered into the task's ledger, as for a model.
        """
        call_id = f"call_{next(call_ids)}"
        denial = gates.check(run.task, name, args, run.evidence)
        excerpts: list[Excerpt] = []
        if denial is not None:
            run.denials.append(denial)
            output = denial.message()
        else:
            state = {"task": run.task, "evidence": run.evidence}
            message = call_tool(tools[name], args, state, call_id)
            excerpts = message.artifact or []
            output, shown = record(run.evidence, excerpts)
            run.evidence = shown_more(run.evidence, shown)
        run.log.append(
            AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])
        )
        run.log.append(ToolMessage(output, tool_call_id=call_id, name=name))
        return excerpts

    def search(value: str, run: Reading) -> list[Excerpt]:
        """Hits on `value`'s own pages for the question, else on its words alone."""
        query = {"query": f"{value} {run.task.question}", "k": 10}
        hits = _about(value, call("search", query, run))
        if hits:
            return hits
        return call("search", {"query": value, "k": 10, "match_all": True}, run)

    def research(state: AgentState) -> dict[str, object]:
        task = state["task"]
        run = Reading(task)
        claimed: list[ClaimedFinding] = []
        errors: list[str] = []
        for at, value in enumerate(task.values):
            if reason := wrap_up_reason(state, tool_calls=len(run.log) // 2):
                left = ", ".join(task.values[at:])
                errors.append(f"{wrapped_up(reason)}; not searched: {left}")
                break
            weights = idf_weights(kb, [*terms(task.question), *terms(value)])
            read = []
            for hit in _best_hits(search(value, run), weights, PASSAGES_READ_PER_VALUE):
                shown = handle_of(hit["passage_id"], run.evidence)
                for passage in call("read", {"handle": shown}, run):
                    read.append((passage["passage_id"], passage["sentences"]))
            claimed += [
                ClaimedFinding(
                    evidence=handle_of(extract.passage_id, run.evidence),
                    sentences=[extract.number],
                    values=[at + 1],
                    confidence=round(extract.matched, 3),
                )
                for extract in best_sentences(read, weights, findings_per_value)
            ]
        answer = SubagentAnswer.model_construct(findings=claimed)
        findings, refused = check_answer(answer, task, run.evidence, kb)
        return {
            "messages": run.log,
            "findings": findings,
            "errors": errors + refused,
            "steps": len(run.log),
            "denials": run.denials,
            "evidence": run.evidence,
        }

    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("research", research)
    builder.add_edge(START, "research")
    builder.add_edge("research", END)
    return builder.compile(name=manifest.agent_id, checkpointer=False)


def _about(value: str, hits: list[Excerpt]) -> list[Excerpt]:
    """The hits whose title and section hold every word of `value`."""
    wanted = set(terms(value))
    return [h for h in hits if wanted <= set(terms(f"{h['title']} {h['section']}"))]


def _best_hits(hits: list[Excerpt], weights: dict[str, float], n: int) -> list[Excerpt]:
    """The `n` search hits whose openings carry most query weight."""

    def weight(hit: Excerpt) -> float:
        words = set(terms(" ".join(hit["sentences"])[:OPENING_CHARS]))
        return sum(w for t, w in weights.items() if t in words)

    return sorted(hits, key=lambda h: (-weight(h), h["passage_id"]))[:n]
