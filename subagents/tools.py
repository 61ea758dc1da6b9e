"""The tools subagents may call: search and read the knowledge base, fetch a page.

Each call sees the subagent's task (LangGraph's `InjectedState`, hidden from
the model): a search leaves out the passages the run has already cited.
`web_fetch` reaches outside the knowledge base, so it is dangerous: the gates
deny it unless the configuration approves it (see `subagents.gates`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated

import httpx
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import InjectedState

from runtime.kb import KnowledgeBase, Passage
from state.tasks import TaskDefinition

SNIPPET_CHARS = 500
FETCH_CHARS = 4000
FETCH_TIMEOUT_S = 10.0
TOOL_NAMES = ("search", "read", "web_fetch")
"""Every tool a definition may name."""
DANGEROUS_TOOLS = frozenset({"web_fetch"})
"""Tools that reach outside the knowledge base."""
DELEGATING_TOOLS = frozenset(
    {"task", "delegate", "handoff", "transfer_to_agent", "spawn_agent", "call_agent"}
)
"""Tool names that hand work to another agent: no subagent may have one."""
Task = Annotated[TaskDefinition, InjectedState("task")]
TAKES_TASK = frozenset({"search"})
"""Tools given the task (`Task`, injected), not only the model's arguments."""


def make_tools(kb: KnowledgeBase) -> dict[str, BaseTool]:
    """Every tool, by name."""

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

    def web_fetch(url: str) -> str:
        """Fetch a web page's text (http or https).

        Args:
            url: The page to fetch.
        """
        if not url.startswith(("http://", "https://")):
            return json.dumps({"error": "only http(s) URLs can be fetched"})
        try:
            reply = httpx.get(url, timeout=FETCH_TIMEOUT_S, follow_redirects=False)
        except httpx.HTTPError as err:
            return json.dumps({"error": f"could not fetch {url}: {err}"})
        return json.dumps(
            {"url": url, "status": reply.status_code, "text": reply.text[:FETCH_CHARS]}
        )

    tools = (search, read, web_fetch)
    return {f.__name__: StructuredTool.from_function(f) for f in tools}


def call_tool(tool: BaseTool, args: Mapping[str, object], task: TaskDefinition) -> str:
    """Call a tool outside a ToolNode, injecting the task where the tool takes it."""
    given = {**args, "task": task} if tool.name in TAKES_TASK else dict(args)
    return str(tool.invoke(given))


def tool_result(tool: str, output: str) -> str:
    """A tool's output as a message to a model that cannot take tool messages."""
    return f"Result of {tool}:\n{output}"


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
