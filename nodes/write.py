"""write: the cited report, its coverage table and what stayed uncovered."""

from __future__ import annotations

import asyncio
import time

from langgraph.runtime import Runtime

from roles.render import facet_sections, number_citations, render_markdown
from roles.synthesis import Checked, synthesizer
from runtime.context import Context
from runtime.models import load_chat_model
from runtime.reliability import describe, failure_kind, settle
from state.graph import ResearchState
from state.report import Report, RunSummary, coverage_table
from state.usage import Usage
from subagents.contract import refused_by_reason


async def write(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Render the report with numbered citations and its coverage.

    In LLM mode the lead opens it with a cited synthesis; a synthesis that
    fails costs only itself. Facet sections, the coverage table, what stayed
    uncovered and the sources follow.
    """
    ctx = runtime.context
    plan, findings = state["plan"], state.get("findings", [])
    results = list(state.get("results", {}).values())
    history = state.get("coverage", [])
    table = coverage_table(plan, findings, ctx.min_findings_per_value)
    gaps = [r.value for r in table if r.status != "covered"]
    citations = number_citations(plan, findings)
    lead = state.get("lead_usage", Usage())
    checked = Checked(None)
    lost = False
    model = await asyncio.to_thread(load_chat_model, ctx.model("lead"))
    writer = synthesizer(model, ctx.lead_timeout_s, ctx.lead_max_tokens)
    if writer is not None and findings:
        outcome = await settle(
            writer.synthesize(plan.question, findings, citations, gaps)
        )
        if isinstance(outcome, Exception):
            checked = Checked(
                None, failure=f"the lead model failed ({describe(outcome)})"
            )
            lost = failure_kind(outcome) == "unreachable"
        else:
            checked, lead = outcome.checked, lead + outcome.usage
    summary = RunSummary.of(
        results,
        history,
        findings=len(findings),
        dropped=state.get("dropped", {}),
        refused=refused_by_reason(results),
        lead=lead,
        sentences_kept=checked.sentences_kept,
        citations_dropped=checked.citations_dropped,
        sentences_dropped=checked.sentences_dropped,
        sentences_unsupported=checked.sentences_unsupported,
        sentences_recited=checked.sentences_recited,
        findings_chosen=checked.findings_chosen,
        summary_failure=checked.failure,
        lead_unreachable=lost,
        breakers=state.get("breakers", {}),
        verifier=state.get("fact_check_usage", Usage()),
        fact_check_failure=state.get("fact_check_failure"),
        wall_seconds=time.time() - state.get("started_at", time.time()),
    )
    report = Report(
        markdown=render_markdown(
            plan,
            findings,
            citations,
            table,
            summary,
            results,
            checked.shown(),
            history[-1].stopped if history else None,
            state.get("blocked", {}),
        ),
        sections=tuple(title for title, _ in facet_sections(plan, findings)),
        citations=tuple(citations.values()),
        coverage_table=tuple(table),
        unresolved_gaps=tuple(gaps),
        summary=summary,
    )
    return {"report": report}
