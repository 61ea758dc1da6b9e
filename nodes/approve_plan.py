"""approve_plan: a person accepts, edits or extends the plan before it is sent.

With `approve_plan` set when the run was planned (and a checkpointer to pause
on), the run stops after planning with the plan; the answer is "accept", an
edit of its facets, or new values. The plan that goes out is the one the
person left, linted like any.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from roles.delegation import first_tasks
from runtime.context import Context
from runtime.durable import can_pause
from runtime.escalation import ask_until
from runtime.telemetry import emit
from state.graph import ResearchState
from state.plan import CoveragePlan
from state.plan_review import PlanReview, PlanReviewError, read_review, reviewed
from subagents.services import services


async def approve_plan(
    state: ResearchState, runtime: Runtime[Context]
) -> ResearchState:
    """Pause for the person's review of the plan; send the plan they leave."""
    ctx = runtime.context
    if not state.get("plan_review") or not can_pause(runtime):
        return {}
    plan = state["plan"]
    agents = dict((await services(ctx)).agents)

    def read(answer: Any) -> CoveragePlan:
        review: PlanReview = read_review(answer)
        new = reviewed(plan, review)
        unknown = {f.agent_id for f in new.facets} - set(agents)
        if unknown:
            raise PlanReviewError(f"no subagent is named {', '.join(sorted(unknown))}")
        return new

    shown = {
        "kind": "plan",
        "question": plan.question,
        "plan": plan.model_dump(mode="json"),
        "options": ["accept", "edit", "add"],
    }
    approved = ask_until(shown, read, PlanReviewError)
    event = emit(
        "COVERAGE",
        stage="approved",
        changed=approved != plan,
        values=len(approved.values),
        facets=len(approved.facets),
    )
    if approved == plan:
        return {"events": [event]}
    tasks = first_tasks(approved, ctx, state["run_id"], agents)
    return {"plan": approved, "pending": tasks, "events": [event]}
