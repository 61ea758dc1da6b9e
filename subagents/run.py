"""Running one task: the agent's compiled subgraph for the mode, and its result.

A subagent that fails or times out gives a failed `TaskResult`, so one branch
never sinks the run; LangGraph's control flow propagates.
"""

from __future__ import annotations

import asyncio
import functools
import time
from datetime import UTC, datetime

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph.state import CompiledStateGraph

from runtime.kb import knowledge_base
from runtime.metering import UsageMeter
from runtime.models import ModelSettings, load_chat_model
from runtime.reliability import describe, failure_kind, settle
from state.agents import AgentManifest
from state.tasks import TaskDefinition, TaskResult
from subagents.contract import brief
from subagents.extractive_agent import build_extractive_agent
from subagents.json_agent import build_json_agent
from subagents.llm_agent import build_llm_agent
from subagents.state import AgentInput, AgentOutput, AgentState

Subagent = CompiledStateGraph[AgentState, None, AgentInput, AgentOutput]


@functools.lru_cache(maxsize=32)
def compiled_subagent(
    manifest: AgentManifest,
    settings: ModelSettings,
    kb_path: str,
    findings_per_value: int,
) -> Subagent:
    """The agent's subgraph for its model (extractive when it names no model).

    The most recently used are kept compiled; the cache is bounded, whatever
    settings callers send.
    """
    kb = knowledge_base(kb_path)
    model = load_chat_model(settings)
    if model is None:
        return build_extractive_agent(manifest, kb, findings_per_value)
    if settings.protocol == "json":
        return build_json_agent(manifest, model, kb)
    return build_llm_agent(manifest, model, kb)


async def run_task(
    task: TaskDefinition, manifest: AgentManifest, subagent: Subagent
) -> TaskResult:
    """Run `task` in a fresh `[system prompt, brief]` state, within its time limit."""
    limit = min(task.timeout_s, manifest.timeout_s)
    started, clock = datetime.now(UTC), time.perf_counter()
    start: AgentInput = {
        "messages": [SystemMessage(manifest.system_prompt), HumanMessage(brief(task))],
        "task": task,
    }
    meter = UsageMeter()
    run = subagent.ainvoke(start, {"callbacks": [meter]})
    outcome = await settle(asyncio.wait_for(run, limit))
    seconds = time.perf_counter() - clock
    if isinstance(outcome, Exception):
        kind = failure_kind(outcome)
        reason = (
            f"timed out after {limit:g}s" if kind == "timeout" else describe(outcome)
        )
        return TaskResult.of(
            task,
            findings=[],
            errors=[reason],
            started_at=started,
            seconds=seconds,
            usage=meter.usage,
            failure=kind,
        )
    return TaskResult.of(
        task,
        findings=outcome["findings"],
        errors=outcome["errors"],
        started_at=started,
        seconds=seconds,
        usage=meter.usage,
        steps=outcome["steps"],
        failure=outcome.get("failure"),
    )
