"""The tools subagents may call: the knowledge base's, the web's, the user's.

`search` and `read` work on the knowledge base. Each call sees the subagent's
task and evidence ledger (LangGraph's `InjectedState`, hidden from the model):
a search leaves out the passages the run has already cited, and `read` takes
the handle of a passage shown. What they show comes back as their tool
message's artifact (`subagents.evidence.Excerpt`), which code numbers before a
model sees it.

Every other tool (`web_fetch`, `web_search` through Tavily when
`TAVILY_API_KEY` is set, a user's LangChain tool named
`package.module:attribute`, an MCP server's `mcp__<server>__<tool>`) is wrapped
by `as_evidence`: what it returns is recorded by code as tool evidence
(`state.evidence.ToolEvidence`) and numbered the same way, so a finding can
cite it and verification checks it. Those tools reach outside the knowledge
base: they are dangerous, and the gates deny them unless the configuration
approves them (see `subagents.gates`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Annotated, Any

import httpx
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import InjectedState
from pydantic import SecretStr

from runtime.kb import KnowledgeBase
from runtime.reliability import describe, shorten
from runtime.text import WORD
from state.evidence import ToolEvidence, evidence_id
from state.findings import MIN_QUOTE_WORDS, long_enough_to_quote
from state.tasks import TaskDefinition
from subagents.evidence import (
    NOTHING_FOUND,
    Excerpt,
    Ledger,
    excerpt,
    passage_of,
    recorded_excerpt,
)

ECHOED = "[the call's own words]"
"""What stands in a tool's output for an argument it repeated (`without_echo`)."""
FETCH_CHARS = 4000
FETCH_TIMEOUT_S = 10.0
TOOL_NAMES = ("search", "read", "web_fetch", "web_search")
"""The built-in tools."""
SAFE_TOOLS = frozenset({"search", "read"})
"""The knowledge base's tools; every other tool reaches outside it: dangerous."""
MAX_HITS = 10
"""Most passages one search shows."""
MAX_OUTPUT_CHARS = 20_000
"""Most characters of one tool output recorded as evidence; the rest is cut."""
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
            MAX_HITS,
            op="AND" if match_all else "OR",
            exclude={s.passage_id for s in task.cited},
        )
        # a passage too short to quote is left out: no finding could rest on it
        quotable = [p for p in hits if long_enough_to_quote(p.text)]
        return _shown([excerpt(p, query) for p in quotable[: max(1, min(k, MAX_HITS))]])

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

    shown = {
        f.__name__: StructuredTool.from_function(
            f, response_format="content_and_artifact"
        )
        for f in (search, read)
    }
    searching = web_search()
    return {
        **shown,
        "web_fetch": web_fetch,
        **({"web_search": searching} if searching else {}),
    }


WEB_RESULTS = 5
"""Results a web search shows, each its own evidence."""


def web_search() -> BaseTool | None:
    """Tavily's web search when `TAVILY_API_KEY` is set; None without a key.

    `TAVILY_API_BASE_URL` points it at another endpoint of the same API.
    """
    key = os.environ.get("TAVILY_API_KEY")
    if not key:
        return None
    from langchain_tavily import TavilySearch  # only with a key: a heavy import
    from langchain_tavily._utilities import TavilySearchAPIWrapper

    api = TavilySearchAPIWrapper(
        tavily_api_key=SecretStr(key),
        api_base_url=os.environ.get("TAVILY_API_BASE_URL"),
    )
    tavily = TavilySearch(api_wrapper=api, max_results=WEB_RESULTS)

    async def search_the_web(query: str) -> tuple[str, list[Excerpt]]:
        """Search the web; every page found is evidence, with its address.

        Args:
            query: What to look for.
        """
        found = await tavily.ainvoke({"query": query})
        results = found.get("results", []) if isinstance(found, dict) else []
        shown = [
            shown_evidence("web_search", {"query": query}, str(r["content"]), r["url"])
            for r in results
            if isinstance(r, dict) and r.get("content") and r.get("url")
        ]
        excerpts = [e for _, more in shown for e in more]
        titles = "; ".join(str(r.get("title", "")) for r in results if r)
        return (f"Found: {titles}" if excerpts else NOTHING_FOUND), excerpts

    return StructuredTool.from_function(
        coroutine=search_the_web,
        name="web_search",
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def fetch(url: str) -> tuple[str, list[Excerpt]]:
    """Fetch a web page's text (http or https); the page becomes evidence.

    Args:
        url: The page to fetch.
    """
    if not url.startswith(("http://", "https://")):
        raise ToolException("only http(s) URLs can be fetched")
    try:
        reply = httpx.get(url, timeout=FETCH_TIMEOUT_S, follow_redirects=False)
    except httpx.HTTPError as err:
        raise ToolException(f"could not fetch {url}: {describe(err)}") from err
    if reply.status_code >= 400:
        raise ToolException(f"{url} answered {reply.status_code}")
    return shown_evidence("web_fetch", {"url": url}, reply.text[:FETCH_CHARS], url)


web_fetch = StructuredTool.from_function(
    fetch,
    name="web_fetch",
    response_format="content_and_artifact",
    handle_tool_error=True,
)


def shown_evidence(
    tool: str, args: Mapping[str, Any], text: str, url: str | None = None
) -> tuple[str, list[Excerpt]]:
    """A tool's output recorded as evidence, and the excerpt that shows it."""
    text = without_echo(text.strip()[:MAX_OUTPUT_CHARS], args)
    if not text:
        return NOTHING_FOUND, []
    called = shorten(json.dumps(dict(args), default=str, ensure_ascii=False), 200)
    record = ToolEvidence(
        evidence_id=evidence_id(tool, text), tool=tool, args=called, url=url, text=text
    )
    return f"Result of {tool}", [recorded_excerpt(record)]


def without_echo(text: str, args: Mapping[str, Any]) -> str:
    """`text` with the call's own long arguments blanked out as ECHOED.

    A tool that repeats its query ("No results for: <query>") would make the
    model's words evidence. An argument of MIN_QUOTE_WORDS words or more (a
    quote's least) is the model's, wherever the output repeats it; a shorter
    one, such as a name searched for, stays: results name what was asked.
    """
    for value in _strings(args):
        words = WORD.findall(value)
        if len(words) >= MIN_QUOTE_WORDS:
            echo = r"[\W_]+".join(map(re.escape, words))
            text = re.sub(rf"(?<![^\W_]){echo}(?![^\W_])", ECHOED, text, flags=re.I)
    return text


def _strings(value: Any) -> list[str]:
    """Every string in a tool call's arguments, however nested."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def as_text(output: Any) -> str:
    """A tool's output as text: its text blocks joined, anything else as JSON."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(isinstance(b, dict) for b in output):
        texts = [str(b.get("text", "")) for b in output if b.get("type") == "text"]
        if texts:
            return "\n\n".join(texts)
    return json.dumps(output, default=str, ensure_ascii=False)


def as_evidence(tool: BaseTool, name: str) -> BaseTool:
    """`tool` under `name`, what it returns recorded as evidence by code.

    An error the tool reports (a `ToolException`) goes back to the agent as an
    error message, not as evidence; any other exception fails the call.
    """

    async def call(**args: Any) -> tuple[str, list[Excerpt]]:
        output = await tool.ainvoke(args)
        return shown_evidence(name, args, as_text(output))

    return StructuredTool(
        name=name,
        description=tool.description,
        args_schema=tool.args_schema,
        coroutine=call,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


async def call_tool(
    tool: BaseTool,
    args: Mapping[str, object],
    state: Mapping[str, object],
    call_id: str,
) -> ToolMessage:
    """Call a tool as the agent loop does, injecting the state it takes: a message.

    A tool with no coroutine (the knowledge base's) runs in a worker thread.
    """
    given = dict(args)
    if tool.name in INJECTED:
        given[INJECTED[tool.name]] = state[INJECTED[tool.name]]
    call = {"type": "tool_call", "name": tool.name, "args": given, "id": call_id}
    message = await tool.ainvoke(call)
    assert isinstance(message, ToolMessage)
    return message


def tool_result(tool: str, output: str) -> str:
    """A tool's output as a message to a model that cannot take tool messages."""
    return f"Result of {tool}:\n{output}"


def _shown(excerpts: list[Excerpt]) -> tuple[str, list[Excerpt]]:
    """A tool's answer: what it found in brief, and the excerpts to number."""
    titles = "; ".join(dict.fromkeys(e["title"] for e in excerpts))
    return (f"Found: {titles}" if excerpts else NOTHING_FOUND), excerpts
