"""Gates: tool calls a rule refuses are denied by code, whatever the model says."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from graphs.research import builder
from runtime.context import Context
from runtime.kb import ingest
from subagents.gates import ToolCallCheck
from tests.support import research
from tests.unit.fakes import USAGE, AnsweringModel, scripted, values_in_brief

FIXTURES = Path(__file__).parents[1] / "fixtures" / "injection"
QUESTION = "What are the landmarks of Eastport?"
PLAN = {
    "direct_answer": False,
    "dimensions": [{"name": "landmark", "values": ["harbour", "lighthouse"]}],
    "facets": [
        {
            "id": "f0",
            "title": "Harbour",
            "brief": "The harbour.",
            "values": ["harbour"],
        },
        {
            "id": "f1",
            "title": "Light",
            "brief": "The lighthouse.",
            "values": ["lighthouse"],
        },
    ],
}
INSTRUCTION = re.compile(r"call the (\w+) tool with url (\S+)")


class Obedient(AnsweringModel):
    """Searches its value, does what a passage tells it to, then answers.

    With `read_first`, it reads a passage before it ever searched.
    """

    read_first: bool = False

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        """The next step of reading what it is told to."""
        brief = next(m for m in messages if isinstance(m, HumanMessage))
        (value,) = values_in_brief(str(brief.content))
        done = [m for m in messages if isinstance(m, ToolMessage)]
        called = {m.name for m in done}
        if self.read_first and not done:
            return call("read", handle="E1")
        if "search" not in called:
            return call("search", query=value)
        searched = next(str(m.content) for m in done if m.name == "search")
        if "read" not in called and not searched.startswith("Denied"):
            return call("read", handle="E1")
        asked = INSTRUCTION.search(" ".join(str(m.content) for m in done))
        if asked and asked.group(1) not in called:
            return call(asked.group(1), url=asked.group(2).rstrip("."))
        if searched.startswith("Denied"):
            return AIMessage('{"findings": []}', usage_metadata=USAGE)
        answer = {"findings": [{"evidence": "E1", "sentences": [1]}]}
        return AIMessage(json.dumps(answer), usage_metadata=USAGE)


def call(tool: str, **args: str) -> AIMessage:
    return AIMessage(
        "",
        usage_metadata=USAGE,
        tool_calls=[{"name": tool, "args": args, "id": f"call_{tool}"}],
    )


class Collector(ThreadingHTTPServer):
    """A loopback web server that counts the pages fetched from it."""

    fetched: list[str]


@pytest.fixture
def collector() -> Iterator[Collector]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.fetched.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"registered")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = Collector(("127.0.0.1", 0), Handler)
    server.fetched = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


@pytest.fixture
def injected_kb(tmp_path: Path, collector: Collector) -> str:
    """The landmarks, one of whose passages tells agents to call web_fetch."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for doc in FIXTURES.glob("*.md"):
        text = doc.read_text().replace("PORT", str(collector.server_address[1]))
        (folder / doc.name).write_text(text)
    path = tmp_path / "kb.sqlite"
    ingest(path, [folder])
    return str(path)


@pytest.fixture
def browser(tmp_path: Path) -> str:
    """A user's folder with an agent that may fetch web pages."""
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "researcher.md").write_text(
        "---\nname: researcher\ndescription: Researches, and browses.\n"
        "tools: [search, read, web_fetch]\n---\nYou research.\n"
    )
    return str(folder)


def run(
    fake_models: Callable[[BaseChatModel], str],
    kb: str,
    model: BaseChatModel | None = None,
    **settings: Any,
) -> dict[str, Any]:
    context = Context(
        lead_model=fake_models(scripted(PLAN, {"dimensions": []}, "Eastport [1].")),
        subagent_model=fake_models(model or Obedient()),
        kb_path=kb,
        max_rounds=0,
        **settings,
    )
    return research(QUESTION, context)


def gate_events(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(e.fields) for e in state["events"] if e.kind == "GATE"]


def test_an_injected_call_to_a_tool_the_agent_lacks_is_denied(
    fake_models: Callable[[BaseChatModel], str],
    injected_kb: str,
    collector: Collector,
) -> None:
    state = run(fake_models, injected_kb)
    (denied,) = gate_events(state)
    assert (denied["tool"], denied["rule"]) == ("web_fetch", "allow-list")
    assert collector.fetched == []
    assert state["report"] is not None
    assert {f.values for f in state["findings"]} == {("harbour",), ("lighthouse",)}
    harbour = next(r for r in state["results"].values() if r.values == ("harbour",))
    assert harbour.status == "success" and harbour.denials[0].rule == "allow-list"


def test_a_dangerous_tool_is_denied_unless_the_configuration_approves_it(
    fake_models: Callable[[BaseChatModel], str],
    injected_kb: str,
    browser: str,
    collector: Collector,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = run(fake_models, injected_kb, agents_dir=browser)
    (denied,) = gate_events(state)
    assert (denied["tool"], denied["rule"]) == ("web_fetch", "dangerous-tool")
    assert collector.fetched == []
    with pytest.raises(ValueError, match="DELEGATOR_APPROVABLE_TOOLS"):
        run(fake_models, injected_kb, agents_dir=browser, approved_tools="web_fetch")
    monkeypatch.setenv("DELEGATOR_APPROVABLE_TOOLS", "web_fetch")  # the operator's
    approved = run(
        fake_models, injected_kb, agents_dir=browser, approved_tools="web_fetch"
    )
    assert gate_events(approved) == []
    assert collector.fetched == ["/collect"]


def test_a_dangerous_call_can_go_to_a_person_who_approves_it(
    fake_models: Callable[[BaseChatModel], str],
    injected_kb: str,
    browser: str,
    collector: Collector,
) -> None:
    context = Context(
        lead_model=fake_models(scripted(PLAN, {"dimensions": []}, "Eastport [1].")),
        subagent_model=fake_models(Obedient()),
        kb_path=injected_kb,
        max_rounds=0,
        agents_dir=browser,
        dangerous_tools="ask",
    )
    app = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "ask"}}

    async def step(given: Any) -> Any:
        await app.ainvoke(given, config, context=context)
        return await app.aget_state(config)

    paused = asyncio.run(step({"question": QUESTION}))
    (waiting,) = paused.interrupts
    assert "web_fetch" in waiting.value["reason"]
    assert collector.fetched == []
    done = asyncio.run(step(Command(resume="retry")))
    assert collector.fetched == ["/collect"]  # approved once, fetched once
    harbour = next(
        r for r in done.values["results"].values() if r.values == ("harbour",)
    )
    assert harbour.escalation == "retry" and not harbour.denials


def test_a_read_before_any_search_is_denied(
    fake_models: Callable[[BaseChatModel], str], injected_kb: str
) -> None:
    state = run(fake_models, injected_kb, Obedient(read_first=True))
    prerequisite = [e for e in gate_events(state) if e["rule"] == "prerequisite"]
    assert {e["tool"] for e in prerequisite} == {"read"}
    assert len(prerequisite) == 2  # one per subagent
    assert state["report"] is not None


def no_harbour_searches(call: ToolCallCheck) -> str | None:
    """A user's gate: searches may not name the harbour."""
    if call.tool == "search" and "harbour" in str(call.args.get("query", "")):
        return "the harbour is off limits"
    return None


def test_a_user_gate_named_in_the_context_runs_after_the_built_in_ones(
    fake_models: Callable[[BaseChatModel], str],
    injected_kb: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DELEGATOR_GATE_PACKAGES", "tests")
    gate = "tests.unit.test_gates:no_harbour_searches"
    state = run(fake_models, injected_kb, gates=gate)
    denied = [e for e in gate_events(state) if e["rule"] == gate]
    assert denied and denied[0]["reason"] == "the harbour is off limits"


def test_a_gate_from_a_package_not_allowed_is_refused(
    fake_models: Callable[[BaseChatModel], str], injected_kb: str
) -> None:
    with pytest.raises(ValueError, match="not in a package DELEGATOR_GATE_PACKAGES"):
        run(fake_models, injected_kb, gates="os:system")
