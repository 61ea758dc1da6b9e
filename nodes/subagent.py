"""subagent: run one task in its agent's isolated subgraph; return only a result."""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from runtime.context import Context
from runtime.models import parallel_limit
from runtime.slots import run_slot
from runtime.telemetry import emit
from state.graph import ResearchState, SubagentInput
from subagents.registry import load_registry
from subagents.run import compiled_subagent, run_task


async def subagent(state: SubagentInput, runtime: Runtime[Context]) -> ResearchState:
    """Run the task's subagent within the run's parallel cap; record the result.

    Configuration errors (an undefined agent, an unknown model spec) propagate:
    no retry or other task would mend them.
    """
    ctx, task = runtime.context, state["task"]
    manifest = (await asyncio.to_thread(load_registry))[task.agent_id]
    graph = await asyncio.to_thread(
        compiled_subagent,
        manifest,
        ctx.model(manifest.model),
        ctx.kb_path,
        ctx.findings_per_value,
    )
    limit = parallel_limit(ctx.model(manifest.model)) or ctx.max_parallel
    async with run_slot(task.trace_id, min(ctx.max_parallel, limit)):
        delegate = emit(
            "DELEGATE",
            task_id=task.task_id,
            agent=task.agent_id,
            objective=task.brief,
            timeout=min(task.timeout_s, manifest.timeout_s),
            round=task.round,
            values=", ".join(task.values),
            version=manifest.version,
        )
        result = await run_task(task, manifest, graph)
    done = emit(
        "RESULT",
        task_id=task.task_id,
        agent=task.agent_id,
        status=result.status,
        exec=f"{result.execution_time_s:.1f}s",
        confidence=result.confidence,
        findings=len(result.findings),
        round=task.round,
        error=result.errors[0] if result.errors else None,
    )
    return {"results": {task.task_id: result}, "events": [delegate, done]}
