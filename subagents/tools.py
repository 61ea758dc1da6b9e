"""The tools subagents may call: search and read over the knowledge base."""

from __future__ import annotations

import json

from langchain_core.tools import BaseTool, StructuredTool

from runtime.kb import KnowledgeBase, Passage

SNIPPET_CHARS = 500


def make_tools(kb: KnowledgeBase) -> dict[str, BaseTool]:
    """The knowledge base tools, by name."""

    def search(query: str, k: int = 5, match_all: bool = False) -> str:
        """Search the knowledge base; returns passages with ids and snippets.

        Args:
            query: Keywords to look for.
            k: How many passages to return (1-10).
            match_all: Require every keyword, instead of any.
        """
        hits = kb.search(query, max(1, min(k, 10)), op="AND" if match_all else "OR")
        return json.dumps(
            [_describe(p, SNIPPET_CHARS) for p in hits], ensure_ascii=False
        )

    def read(passage_id: str) -> str:
        """Read the full text of one passage by its id.

        Args:
            passage_id: An id returned by `search`, like 'Doc_title#3'.
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
