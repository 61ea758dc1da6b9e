"""The tools subagents may call: search and read over the knowledge base.

Each call sees the subagent's task (LangGraph's `InjectedState`, hidden from
the model): a search leaves out the passages the run has already cited.
"""

from __future__ import annotations

import json
from typing import Annotated

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import InjectedState

from runtime.kb import KnowledgeBase, Passage
from state.tasks import TaskDefinition

SNIPPET_CHARS = 500
Task = Annotated[TaskDefinition, InjectedState("task")]


def make_tools(kb: KnowledgeBase) -> dict[str, BaseTool]:
    """The knowledge base tools, by name."""

    def search(  # noqa: D417 - `task` is injected, not the model's to give
        query: str, task: Task, k: int = 5, match_all: bool = False
    ) -> str:
        """Search the knowledge base; returns passages with ids and snippets.

        Args:
            query: Keywords to look for.
            k: How many passages to return (1-10).
            match_all: Require every keyword, instead of any.
        """
        hits = kb.search(
            query,
            max(1, min(k, 10)),
            op="AND" if match_all else "OR",
            exclude={s.passage_id for s in task.cited},
        )
        return json.dumps(
            [_describe(p, SNIPPET_CHARS) for p in hits], ensure_ascii=False
        )

    def read(passage_id: str) -> str:
        """Read the full text of one passage.

        Args:
            passage_id: The passage_id of a passage that `search` returned.
        """
        passage = kb.passage(passage_id)
        if passage is None:
            return json.dumps({"error": f"no passage {passage_id!r}"})
        return json.dumps(_describe(passage, None), ensure_ascii=False)

    return {
        "search": StructuredTool.from_function(search),
        "read": StructuredTool.from_function(read),
    }


def _describe(passage: Passage, limit: int | None) -> dict[str, str]:
    text = passage.text
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return {
        "passage_id": passage.passage_id,
        "title": passage.title,
        "section": passage.section,
        "text": text,
    }
