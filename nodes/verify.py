"""verify: keep only findings that pass the checks by code; count the rest.

Findings that quote the same words (in two passages, or from two tasks) are
kept as one, with all their facets and values.

With a `verifier` set (e.g. the fact_checker definition) and a model to run it
on, the findings the code let by are also judged by that agent, once each: it
may refuse a claim its quote does not support, never add a finding. A verifier
that fails keeps the verdicts it gave; the findings it did not judge are tried
again in the next round, and if the last round's check failed, the run says so
(`fact_check_failure`).
"""

from __future__ import annotations

import asyncio

from langgraph.runtime import Runtime

from roles.fact_check import REFUSED, FactChecker, finding_key
from roles.verify import one_per_quote, verify_findings
from runtime.context import Context
from runtime.sources import Sources
from runtime.telemetry import emit
from runtime.text import period_of
from state.graph import ResearchState
from state.tasks import tool_evidence
from subagents.services import Services, services


async def verify(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Mark the findings that pass every check verified; drop the rest by reason."""
    ctx = runtime.context
    run = await services(ctx)
    sources = Sources(run.kb, tool_evidence(state.get("results", {}).values()))
    kept, dropped = await asyncio.to_thread(
        verify_findings,
        state.get("findings", []),
        sources,
        period_of(state["question"]),
    )
    update: ResearchState = {}
    checked = dict(state.get("fact_checks", {}))
    checker = await asyncio.to_thread(fact_checker, run, ctx) if ctx.verifier else None
    unjudged = [f for f in kept if finding_key(f) not in checked]
    update["fact_check_failure"] = None
    if checker is not None and unjudged:
        judged = await checker.judge(unjudged, sources)
        checked |= judged.verdicts
        update["fact_checks"] = checked
        update["fact_check_usage"] = judged.usage
        if judged.failure is not None:
            left = sum(finding_key(f) not in checked for f in unjudged)
            update["fact_check_failure"] = (
                f"{ctx.verifier} judged {len(unjudged) - left} of {len(unjudged)} "
                f"finding(s), then failed: {judged.failure}"
            )
            update["events"] = [
                emit("COVERAGE", stage="fact_check", error=judged.failure)
            ]
    refused = [f for f in kept if checked.get(finding_key(f)) is False]
    if refused:
        dropped[REFUSED] += len(refused)
        kept = [f for f in kept if checked.get(finding_key(f)) is not False]
    return {**update, "findings": one_per_quote(kept), "dropped": dict(dropped)}


def fact_checker(run: Services, ctx: Context) -> FactChecker | None:
    """The verifier the context names, on its model; None without one or a model."""
    if not ctx.verifier:
        return None
    model = run.model_of(ctx.verifier)
    if model is None:
        return None
    return FactChecker(run.agents[ctx.verifier], model, ctx.lead_timeout_s)
