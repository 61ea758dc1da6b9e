"""aggregate: fan in every result, keep partial ones, dedupe by source span.

It runs once the round's branches are done: while a task of the round still
waits for a person it does nothing, and the task's `escalate` branch brings
the run back here once decided.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from roles.escalation import awaiting_person
from runtime.context import Context
from state.circuit import breakers_after
from state.findings import Finding
from state.graph import ResearchState


def aggregate(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Collect the findings of all results; one finding per cited span.

    A span found for two facets keeps both facets and all their values. Each
    agent's circuit breaker is brought up to date with the results.
    """
    if awaiting_person(state.get("results", {}).values()):
        return {}
    by_span: dict[tuple[str, str, str], Finding] = {}
    results = sorted(
        state.get("results", {}).values(), key=lambda r: (r.round, r.task_id)
    )
    for result in results:
        for finding in result.findings:
            seen = by_span.get(finding.span_key)
            if seen is None:
                by_span[finding.span_key] = finding
                continue
            by_span[finding.span_key] = seen.model_copy(
                update={
                    "facet_ids": tuple(
                        dict.fromkeys(seen.facet_ids + finding.facet_ids)
                    ),
                    "values": tuple(dict.fromkeys(seen.values + finding.values)),
                    "confidence": max(seen.confidence, finding.confidence),
                }
            )
    breakers = breakers_after(results, runtime.context.breaker_threshold)
    return {"findings": list(by_span.values()), "breakers": breakers}
