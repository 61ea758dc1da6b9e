"""verify: keep only findings that pass the checks by code; count the rest."""

from __future__ import annotations

from langgraph.runtime import Runtime

from roles.verify import verify_findings
from runtime.context import Context
from runtime.kb import knowledge_base
from state.graph import ResearchState


def verify(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Mark the findings that pass every check verified; drop the rest by reason."""
    kb = knowledge_base(runtime.context.kb_path)
    kept, dropped = verify_findings(state.get("findings", []), kb)
    return {"findings": kept, "dropped": dict(dropped)}
