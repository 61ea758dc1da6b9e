"""verify: keep only findings whose quote is verbatim in the passage they cite."""

from __future__ import annotations

from langgraph.runtime import Runtime

from runtime.context import Context
from runtime.kb import KnowledgeBase, knowledge_base
from state.findings import Finding, normalize_text
from state.graph import ResearchState


def is_verbatim(finding: Finding, kb: KnowledgeBase) -> bool:
    """Whether the quote appears in the cited passage, up to case and whitespace."""
    passage = kb.passage(finding.source.passage_id)
    return passage is not None and normalize_text(finding.quote) in normalize_text(
        passage.text
    )


def verify(state: ResearchState, runtime: Runtime[Context]) -> ResearchState:
    """Mark verbatim findings verified; drop and count the rest."""
    kb = knowledge_base(runtime.context.kb_path)
    kept = []
    for finding in state.get("findings", []):
        if is_verbatim(finding, kb):
            kept.append(finding.model_copy(update={"verified": True}))
    dropped = len(state.get("findings", [])) - len(kept)
    return {"findings": kept, "dropped": dropped}
