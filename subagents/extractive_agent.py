"""Extractive mode: a subagent calls the same tools by fixed rules, no model.

For each value it searches, reads the passages that carry most of the
question's and the value's words, and quotes their best sentences, until its
budget of tool calls or time is nearly spent.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from runtime.kb import KnowledgeBase, terms
from state.agents import AgentManifest
from state.denials import Denial
from state.findings import Finding
from state.tasks import TaskDefinition
from subagents.budget import wrap_up_reason, wrapped_up
from subagents.gates import Gates
from subagents.reading import best_sentences, idf_weights, quoted_findings
from subagents.registry import DefinitionError
from subagents.state import AgentInput, AgentOutput, AgentState
from subagents.tools import call_tool, make_tools

PASSAGES_READ_PER_VALUE = 3
Hit = dict[str, str]
"""A search hit as the `search` tool returns it: passage_id, title, section, text."""


@dataclass
class Reading:
    """One task's reading: its task, its tool calls so far, what gates refused."""

    task: TaskDefinition
    log: list[AnyMessage] = field(default_factory=list)
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

    def call(name: str, args: dict[str, object], run: Reading) -> str:
        """Call a tool as a model would, gated, logging the request and the answer."""
        call_id = f"call_{next(call_ids)}"
        denial = gates.check(run.task, name, args, run.log)
        if denial is not None:
            run.denials.append(denial)
            output = denial.message()
        else:
            output = call_tool(tools[name], args, run.task)
        run.log.append(
            AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])
        )
        run.log.append(ToolMessage(output, tool_call_id=call_id, name=name))
        return output if denial is None else "null"

    def search(value: str, run: Reading) -> list[Hit]:
        """Hits on `value`'s own pages for the question, else on its words alone."""
        query = {"query": f"{value} {run.task.question}", "k": 10}
        hits = _about(value, json.loads(call("search", query, run)) or [])
        if hits:
            return hits
        exact = {"query": value, "k": 10, "match_all": True}
        return list(json.loads(call("search", exact, run)) or [])

    def research(state: AgentState) -> dict[str, object]:
        task = state["task"]
        run = Reading(task)
        findings: list[Finding] = []
        errors: list[str] = []
        for at, value in enumerate(task.values):
            if reason := wrap_up_reason(state, tool_calls=len(run.log) // 2):
                left = ", ".join(task.values[at:])
                errors.append(f"{wrapped_up(reason)}; not searched: {left}")
                break
            weights = idf_weights(kb, [*terms(task.question), *terms(value)])
            hits = search(value, run)
            read = []
            for hit in _best_hits(hits, weights, PASSAGES_READ_PER_VALUE):
                passage = json.loads(
                    call("read", {"passage_id": hit["passage_id"]}, run)
                )
                if passage and "text" in passage:
                    read.append((passage["passage_id"], passage["text"]))
            extracts = best_sentences(read, weights, findings_per_value)
            findings += quoted_findings(
                extracts, kb, facet_id=task.facet_id, values=(value,)
            )
        return {
            "messages": run.log,
            "findings": findings,
            "errors": errors,
            "steps": len(run.log),
            "denials": run.denials,
        }

    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("research", research)
    builder.add_edge(START, "research")
    builder.add_edge("research", END)
    return builder.compile(name=manifest.agent_id, checkpointer=False)


def _about(value: str, hits: list[Hit]) -> list[Hit]:
    """The hits whose title and section hold every word of `value`."""
    wanted = set(terms(value))
    return [h for h in hits if wanted <= set(terms(f"{h['title']} {h['section']}"))]


def _best_hits(hits: list[Hit], weights: dict[str, float], n: int) -> list[Hit]:
    """The `n` search hits whose snippets carry most query weight."""

    def weight(hit: Hit) -> float:
        words = set(terms(hit["text"]))
        return sum(w for t, w in weights.items() if t in words)

    return sorted(hits, key=lambda h: (-weight(h), h["passage_id"]))[:n]
