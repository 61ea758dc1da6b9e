"""subagent: run one task in its agent's isolated subgraph; return only a result."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from nodes.resources import subgraph
from runtime.context import Context
from runtime.telemetry import emit
from state.graph import ResearchState, SubagentInput
from state.tasks import TaskResult, TaskStatus
from subagents.registry import load_registry
from subagents.subgraph import brief


async def subagent(state: SubagentInput, runtime: Runtime[Context]) -> ResearchState:
    """Invoke the task's subagent with a fresh `[system prompt, brief]` state.

    A subagent that fails or times out gives a failed `TaskResult`, so one
    branch never sinks the run; interrupts and parent commands propagate, and
    so do configuration errors, which no retry or other task would mend.
    """
    ctx, task = runtime.context, state["task"]
    manifest = (await asyncio.to_thread(load_registry))[task.agent_id]
    spec = ctx.lead_model if manifest.model == "lead" else ctx.subagent_model
    graph = await asyncio.to_thread(
        subgraph, task.agent_id, spec, ctx.kb_path, ctx.findings_per_value
    )
    limit = min(task.timeout_s, manifest.timeout_s)
    delegate = emit(
        "DELEGATE",
        task_id=task.task_id,
        agent=task.agent_id,
        objective=task.objective,
        timeout=limit,
        round=task.round,
        values=", ".join(task.values),
    )
    started, clock = datetime.now(UTC), time.perf_counter()
    findings, errors, tokens, steps = [], [], 0, 0
    status: TaskStatus
    try:
        async with asyncio.timeout(limit):
            out = await graph.ainvoke(
                {
                    "messages": [
                        SystemMessage(manifest.system_prompt),
                        HumanMessage(brief(task)),
                    ],
                    "task": task,
                    "findings": [],
                    "errors": [],
                    "turns": 0,
                    "tokens": 0,
                },
                {"recursion_limit": 2 * manifest.max_turns + 6},
            )
        findings, errors = out.get("findings", []), out.get("errors", [])
        tokens, steps = out.get("tokens", 0), len(out.get("messages", [])) - 2
        status = "success" if findings and not errors else "partial"
    except GraphBubbleUp:
        raise
    except TimeoutError:
        errors, status = [f"timed out after {limit:g}s"], "failed"
    except Exception as err:  # noqa: BLE001 - a crashed subagent is a failed task
        errors, status = [f"{type(err).__name__}: {err}"], "failed"
    result = TaskResult(
        task_id=task.task_id,
        agent_id=task.agent_id,
        facet_id=task.facet_id,
        round=task.round,
        values=task.values,
        status=status,
        findings=tuple(findings),
        errors=tuple(errors),
        started_at=started,
        execution_time_s=time.perf_counter() - clock,
        confidence=max((f.confidence for f in findings), default=0.0),
        tokens=tokens,
        steps=max(steps, 0),
    )
    done = emit(
        "RESULT",
        task_id=task.task_id,
        agent=task.agent_id,
        status=status,
        exec=f"{result.execution_time_s:.1f}s",
        confidence=result.confidence,
        findings=len(findings),
        round=task.round,
        error=errors[0] if errors else None,
    )
    return {"results": {task.task_id: result}, "events": [delegate, done]}
