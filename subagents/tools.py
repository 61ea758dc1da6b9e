"""The tools subagents may call: search and read the knowledge base, fetch a page.

Each call sees the subagent's task and evidence ledger (LangGraph's
`InjectedState`, hidden from the model): a search leaves out the passages the
run has already cited, and `read` takes the handle of a passage shown. What
`search` and `read` show comes back as their tool message's artifact
(`subagents.evidence.Excerpt`), which code numbers before a model sees it.
`web_fetch` reaches outside the knowledge base, so it is dangerous: the gates
deny it unless the configuration approves it (see `subagents.gates`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated

import httpx
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.prebuilt import InjectedState

from runtime.kb import KnowledgeBase
from state.tasks import TaskDefinition
from subagents.evidence import NOTHING_FOUND, Excerpt, Ledger, excerpt, passage_of

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
Evidence = Annotated[Ledger, InjectedState("evidence")]
INJECTED = {"search": "task", "read": "evidence"}
"""Tools given part of the subagent's state (injected), by the key they take."""


def make_tools(kb: KnowledgeBase) -> dict[str, BaseTool]:
    """Every tool, by name."""

    def search(  # noqa: D417 - `task` is injected, not the model's to give
        query: str, task: Task, k: int = 5, match_all: bool = False
    ) -> tuple[str, list[Excerpt]]:
        """Search the knowledge base; shows passages and their best sentences.

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
        return _shown([excerpt(p, query) for p in hits])

    def read(  # noqa: D417 - `evidence` is injected, not the model's to give
        handle: str, evidence: Evidence
    ) -> tuple[str, list[Excerpt] | None]:
        """Read every sentence of one passage a search showed.

        Args:
            handle: The handle of a passage a search showed (E1, E2, ...).
        """
        passage_id = passage_of(handle, evidence)
        passage = kb.passage(passage_id) if passage_id else None
        if passage is None:
            return f"no evidence {handle!r}: read a handle a search showed", None
        return _shown([excerpt(passage)])

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

    shown = {
        f.__name__: StructuredTool.from_function(
            f, response_format="content_and_artifact"
        )
        for f in (search, read)
    }
    return {**shown, "web_fetch": StructuredTool.from_function(web_fetch)}


def call_tool(
    tool: BaseTool,
    args: Mapping[str, object],
    state: Mapping[str, object],
    call_id: str,
) -> ToolMessage:
    """Call a tool as the agent loop does, injecting the state it takes: a message."""
    given = dict(args)
    if tool.name in INJECTED:
        given[INJECTED[tool.name]] = state[INJECTED[tool.name]]
    call = {"type": "tool_call", "name": tool.name, "args": given, "id": call_id}
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    return message


def tool_result(tool: str, output: str) -> str:
    """A tool's output as a message to a model that cannot take tool messages."""
    return f"Result of {tool}:\n{output}"


def _shown(excerpts: list[Excerpt]) -> tuple[str, list[Excerpt]]:
    """A tool's answer: what it found in brief, and the excerpts to number."""
    titles = "; ".join(dict.fromkeys(e["title"] for e in excerpts))
    return (f"Found: {titles}" if excerpts else NOTHING_FOUND), excerpts
