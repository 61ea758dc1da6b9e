"""What nodes share: the knowledge base and compiled subgraphs a context names."""

from __future__ import annotations

import functools

from langgraph.graph.state import CompiledStateGraph

from runtime.kb import KnowledgeBase, open_default
from runtime.models import load_chat_model
from subagents.registry import load_registry
from subagents.subgraph import (
    SubagentState,
    build_extractive_subgraph,
    build_llm_subgraph,
)

Subgraph = CompiledStateGraph[SubagentState, None, SubagentState, SubagentState]


@functools.cache
def knowledge_base(kb_path: str) -> KnowledgeBase:
    """The knowledge base at `kb_path` (the shipped one when empty), opened once."""
    return open_default(kb_path)


@functools.cache
def subgraph(
    agent_id: str, model_spec: str, kb_path: str, findings_per_value: int
) -> Subgraph:
    """The compiled subgraph of one agent, for one model and knowledge base."""
    manifest = load_registry()[agent_id]
    kb = knowledge_base(kb_path)
    model = load_chat_model(model_spec)
    if model is None:
        return build_extractive_subgraph(manifest, kb, findings_per_value)
    return build_llm_subgraph(manifest, model, kb)
