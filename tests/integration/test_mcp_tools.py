"""Subagents with the user's tools: a real stdio MCP server, every citation checked.

The server (`tests/fixtures/mcp/harbour_server.py`, written with the `mcp`
SDK) serves `search` and `read` over notes the knowledge base does not hold.
A scripted subagent model calls its tools; what they return is evidence code
records, and findings citing it are verified like passages.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from html import escape
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from subprocess import DEVNULL
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from cli.main import main
from graphs.subagent import graph as subagent_graph
from roles.verify import NOT_VERBATIM
from runtime.context import Context
from runtime.mcp import stop_servers
from state.evidence import ID_PREFIX
from state.graph import SubagentInput
from tests.integration.test_crash_resume import settled, sqlite_finished
from tests.openai_replay import ReplayServer, Reply, role_of, tool_call
from tests.unit.fakes import USAGE, FakeResearcher, scripted, values_in_brief

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp" / "harbour_server.py"
QUESTION = "How do the harbour traditions of Veldmark live on?"
VALUES = ["Veldmark lantern fair", "Tidewater choir"]


def plan(values: list[str]) -> dict[str, Any]:
    """A lead's plan: one dimension, a facet per value."""
    return {
        "dimensions": [{"name": "tradition", "values": values}],
        "facets": [
            {"id": f"f{i}", "title": v, "brief": f"What became of {v}.", "values": [v]}
            for i, v in enumerate(values)
        ],
    }


PLAN = plan(VALUES)
AGENT = """---
name: researcher
description: Researches the harbour notes of Veldmark.
tools: [{tools}]
max_turns: 3
---
You are a research subagent: you research the harbour of Veldmark in its notes.
"""
INVENTED = "The Tidewater choir sang at the coronation of every king."


def mcp_config(folder: Path, **env: str) -> Path:
    """An MCP configuration starting the harbour server with this environment."""
    config = folder / "mcp.json"
    entry = {"command": sys.executable, "args": [str(SERVER)], "env": env}
    config.write_text(json.dumps({"mcpServers": {"harbour": entry}}))
    return config


def agents(folder: Path, tools: str = "mcp__harbour__search") -> Path:
    """A folder whose `researcher` uses only the given tools."""
    folder.mkdir(exist_ok=True)
    (folder / "researcher.md").write_text(AGENT.format(tools=tools))
    return folder


def run(
    fake_models: Callable[[BaseChatModel], str],
    tmp_path: Path,
    kb: str,
    researcher: BaseChatModel,
    *extra: str,
) -> tuple[int, dict[str, Any]]:
    """`delegator research` with a scripted lead and subagent; exit code, result."""
    result = tmp_path / "result.json"
    code = main(
        [
            "research",
            QUESTION,
            "--kb",
            kb,
            "--lead-model",
            fake_models(scripted(PLAN, {"dimensions": []})),
            "--subagent-model",
            fake_models(researcher),
            "--max-rounds",
            "0",
            "--json",
            str(result),
            "--db",
            str(tmp_path / "runs.sqlite"),
            "--quiet",
            *extra,
        ]
    )
    return code, json.loads(result.read_text()) if result.exists() else {}


@pytest.fixture
def approved(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator approves the harbour server's tools."""
    monkeypatch.setenv(
        "DELEGATOR_APPROVED_TOOLS", "mcp__harbour__search,mcp__harbour__read"
    )


@pytest.mark.usefixtures("approved")
def test_findings_cite_mcp_evidence_verified_by_the_same_checks(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    researcher = FakeResearcher(search_tool="mcp__harbour__search", invented=INVENTED)
    page = tmp_path / "report.html"
    code, result = run(
        fake_models,
        tmp_path,
        creative_kb,
        researcher,
        "--agents",
        str(agents(tmp_path / "agents")),
        "--mcp-config",
        str(mcp_config(tmp_path)),
        "--html",
        str(page),
    )
    assert code == 0
    verified = [f for f in result["findings"] if f["verified"]]
    assert verified and all(
        f["source"]["passage_id"].startswith(f"{ID_PREFIX}mcp__harbour__search:")
        for f in verified
    )
    assert {v for f in verified for v in f["values"]} == set(VALUES)
    recorded = {e["evidence_id"]: e for t in result["tasks"] for e in t["evidence"]}
    for finding in verified:
        evidence = recorded[finding["source"]["passage_id"]]
        assert evidence["tool"] == "mcp__harbour__search"
        assert finding["quote"] in evidence["text"]
        assert result["passages"][evidence["evidence_id"]] == evidence["text"]
    assert result["summary"]["dropped_by_reason"][NOT_VERBATIM] == len(VALUES)
    assert INVENTED not in json.dumps(verified)
    html = page.read_text()
    for finding in verified:
        assert f"<mark>{escape(finding['quote'])}</mark>" in html


class Obedient(FakeResearcher):
    """Does what a tool result tells it: fetches the page it names, then answers."""

    def answer(self, messages: list[BaseMessage]) -> AIMessage:
        results = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        told = [u for r in results for u in re.findall(r"web_fetch on (\S+) ", r)]
        fetched = any(
            isinstance(m, AIMessage)
            and any(c["name"] == "web_fetch" for c in m.tool_calls)
            for m in messages
        )
        if told and not fetched:
            call = {"name": "web_fetch", "args": {"url": told[0]}, "id": "fetch"}
            return AIMessage("", usage_metadata=USAGE, tool_calls=[call])
        return super().answer([m for m in messages if m.id != "fetch"])


class Collector(BaseHTTPRequestHandler):
    """Counts every request it receives."""

    received: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        Collector.received.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"collected")

    def log_message(self, *args: Any) -> None:
        """Quiet."""


@pytest.mark.usefixtures("approved")
def test_a_tool_result_cannot_make_the_agent_reach_a_collector(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    collector = HTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{collector.server_port}/steal"
    try:
        code, result = run(
            fake_models,
            tmp_path,
            creative_kb,
            Obedient(search_tool="mcp__harbour__search"),
            "--agents",
            str(agents(tmp_path / "agents", "mcp__harbour__search, web_fetch")),
            "--mcp-config",
            str(mcp_config(tmp_path, HARBOUR_INJECT=url)),
        )
    finally:
        collector.shutdown()
    assert Collector.received == []
    denials = [d for t in result["tasks"] for d in t["denials"]]
    assert denials and {(d["tool"], d["rule"]) for d in denials} == {
        ("web_fetch", "dangerous-tool")
    }
    assert code == 0 and any(f["verified"] for f in result["findings"])


def test_a_server_that_cannot_start_is_one_line_naming_it(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "mcp.json"
    broken = {"command": str(tmp_path / "no-such-server"), "args": []}
    config.write_text(json.dumps({"mcpServers": {"harbour": broken}}))
    code, result = run(
        fake_models,
        tmp_path,
        creative_kb,
        FakeResearcher(search_tool="mcp__harbour__search"),
        "--agents",
        str(agents(tmp_path / "agents")),
        "--mcp-config",
        str(config),
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and result == {}
    assert len(err) == 1 and err[0].startswith("error: MCP server 'harbour'")


CHOIR_AGENT = """---
name: choir_researcher
description: Researches choirs in the notes of a server that dies.
domains: [choir]
tools: [mcp__dying__search]
max_turns: 3
---
You research choirs.
"""


def test_a_server_that_dies_fails_only_the_tasks_that_needed_it(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "DELEGATOR_APPROVED_TOOLS", "mcp__harbour__search,mcp__dying__search"
    )
    config = tmp_path / "mcp.json"
    healthy = {"command": sys.executable, "args": [str(SERVER)]}
    dying = {**healthy, "env": {"HARBOUR_DIE_ON": "choir"}}
    config.write_text(json.dumps({"mcpServers": {"harbour": healthy, "dying": dying}}))
    folder = agents(tmp_path / "agents")
    (folder / "choir_researcher.md").write_text(CHOIR_AGENT)
    code, result = run(
        fake_models,
        tmp_path,
        creative_kb,
        FakeResearcher(search_tool="offered"),
        "--agents",
        str(folder),
        "--mcp-config",
        str(config),
        "--set",
        "task_attempts=1",
    )
    by_agent = {t["agent_id"]: t for t in result["tasks"]}
    assert by_agent["choir_researcher"]["status"] == "failed"
    assert by_agent["choir_researcher"]["errors"]
    assert by_agent["researcher"]["status"] == "success"
    assert code == 0 and any(f["verified"] for f in result["findings"])


TICKETS = '''"""Support tickets of the harbour authority."""

from langchain_core.tools import tool


@tool
def ticket_search(query: str) -> str:
    """Search the harbour authority's support tickets."""
    return (
        "Ticket 4411 says the Veldmark lantern fair lost power on the quay in 2021. "
        "The Tidewater choir sang by torchlight until the power came back."
    )
'''


def test_a_user_tool_from_an_allowed_package_is_evidence_like_any_other(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = tmp_path / "lib" / "harbour_desk"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tickets.py").write_text(TICKETS)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    monkeypatch.setenv("DELEGATOR_TOOL_PACKAGES", "harbour_desk")
    monkeypatch.setenv("DELEGATOR_APPROVED_TOOLS", "ticket_search")
    folder = agents(tmp_path / "agents", "harbour_desk.tickets:ticket_search")
    code, result = run(
        fake_models,
        tmp_path,
        creative_kb,
        FakeResearcher(search_tool="offered"),
        "--agents",
        str(folder),
    )
    verified = [f for f in result["findings"] if f["verified"]]
    assert code == 0 and verified
    assert all(
        f["source"]["passage_id"].startswith(f"{ID_PREFIX}ticket_search:")
        for f in verified
    )


def test_a_user_tool_from_another_package_is_refused_naming_the_file(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DELEGATOR_TOOL_PACKAGES", "harbour_desk")
    folder = agents(tmp_path / "agents", "subprocess:getoutput")
    code, _ = run(
        fake_models,
        tmp_path,
        creative_kb,
        FakeResearcher(search_tool="offered"),
        "--agents",
        str(folder),
    )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert str(folder / "researcher.md") in err
    assert "not in a package DELEGATOR_TOOL_PACKAGES allows" in err
    assert err.count("\n") == 0


NOTES = ["Veldmark lantern fair", "Orrin net lofts", "Tidewater choir"]


class HarbourModel:
    """An OpenAI-compatible lead and subagent: plans the notes, searches, points.

    Counts every brief it answers by its value, across processes that call it.
    """

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        if role == "plan":
            plan = {
                "dimensions": [{"name": "note", "values": NOTES}],
                "facets": [
                    {"id": f"f{i}", "title": v, "brief": f"About {v}.", "values": [v]}
                    for i, v in enumerate(NOTES)
                ],
            }
            return Reply(content=json.dumps(plan))
        if role != "subagent":
            return Reply(content=json.dumps({"dimensions": []}))
        messages = body["messages"]
        value = values_in_brief(str(messages[1]["content"]))[0]
        if not any(m["role"] == "tool" for m in messages):
            call = tool_call("mcp__harbour__search", {"query": value})
            return Reply(tool_calls=[call], delay_s=0.8)
        with self.lock:
            self.asked[value] += 1
        answer = {"findings": [{"evidence": "E1", "sentences": [1]}]}
        return Reply(content=json.dumps(answer), delay_s=0.8)


def test_a_killed_run_resumes_and_still_verifies_and_shows_mcp_evidence(
    creative_kb: str, tmp_path: Path
) -> None:
    model = HarbourModel()
    db, page, out = (
        tmp_path / "runs.sqlite",
        tmp_path / "page.html",
        tmp_path / "r.json",
    )
    with ReplayServer(model) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "test",
            "DELEGATOR_APPROVED_TOOLS": "mcp__harbour__search",
        }
        command = [
            str(Path(sys.executable).parent / "delegator"),
            "research",
            "--kb",
            creative_kb,
            "--quiet",
            "--lead-model",
            "openai:replay",
            "--subagent-model",
            "openai:replay",
            "--max-parallel",
            "1",
            "--max-rounds",
            "0",
            "--agents",
            str(agents(tmp_path / "agents")),
            "--mcp-config",
            str(mcp_config(tmp_path)),
            "--db",
            str(db),
            "--thread",
            "harbour",
        ]
        first = subprocess.Popen(
            [*command, QUESTION], env=env, stdout=DEVNULL, stderr=subprocess.PIPE
        )
        recorded = sqlite_finished(db, "harbour")
        deadline = time.monotonic() + 60
        # one at a time: a second brief answered means the first subagent is done
        while sum(model.asked.values()) < 2:
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            assert time.monotonic() < deadline, "no result was recorded in time"
            time.sleep(0.05)
        assert first.poll() is None, "the run ended before it could be killed"
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=60)
        done = recorded()
        asked_before = settled(lambda: sum(model.asked.values()))
        assert 1 <= done < len(NOTES)
        again = subprocess.run(
            [*command, "--json", str(out), "--html", str(page)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert again.returncode == 0, again.stderr
    result = json.loads(out.read_text())
    # finished subagents were not run again: only the unfinished ones asked
    assert sum(model.asked.values()) - asked_before == len(NOTES) - done
    verified = [f for f in result["findings"] if f["verified"]]
    assert {f["values"][0] for f in verified} == set(NOTES)
    html = page.read_text()
    for finding in verified:
        assert finding["source"]["passage_id"].startswith(ID_PREFIX)
        assert result["passages"][finding["source"]["passage_id"]]
        assert f"<mark>{escape(finding['quote'])}</mark>" in html


@pytest.mark.usefixtures("approved")
def test_the_json_protocol_calls_mcp_tools_by_name(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    steps: list[dict[str, Any]] = [
        {
            "action": "tool",
            "tool": "mcp__harbour__search",
            "args": {"query": "Veldmark lantern fair"},
        },
        {"action": "finish", "findings": [{"evidence": "E1", "sentences": [1]}]},
    ]
    lead = scripted(plan(VALUES[:1]), {"dimensions": []})
    result_file = tmp_path / "result.json"
    code = main(
        [
            "research",
            QUESTION,
            "--kb",
            creative_kb,
            "--lead-model",
            fake_models(lead),
            "--subagent-model",
            fake_models(scripted(*steps)),
            "--set",
            "subagent_protocol=json",
            "--max-rounds",
            "0",
            "--agents",
            str(agents(tmp_path / "agents")),
            "--mcp-config",
            str(mcp_config(tmp_path)),
            "--json",
            str(result_file),
            "--db",
            str(tmp_path / "runs.sqlite"),
            "--quiet",
        ]
    )
    result = json.loads(result_file.read_text())
    verified = [f for f in result["findings"] if f["verified"]]
    assert code == 0 and len(verified) == 1
    assert verified[0]["source"]["passage_id"].startswith(
        f"{ID_PREFIX}mcp__harbour__search:"
    )


class TavilyLike(BaseHTTPRequestHandler):
    """Answers `POST /search` as Tavily's API does, from the harbour notes."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        length = int(self.headers["Content-Length"])
        query = json.loads(self.rfile.read(length))["query"]
        results = [
            {
                "title": title,
                "url": f"https://notes.example/{title.replace(' ', '_')}",
                "content": f"{title} is a harbour tradition of Veldmark since 1890.",
            }
            for title in VALUES
            if title.split()[0] in query
        ]
        body = json.dumps({"query": query, "results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Quiet."""


def test_web_search_results_are_evidence_with_their_addresses(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = HTTPServer(("127.0.0.1", 0), TavilyLike)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    monkeypatch.setenv("TAVILY_API_KEY", "test")
    monkeypatch.setenv("TAVILY_API_BASE_URL", f"http://127.0.0.1:{api.server_port}")
    monkeypatch.setenv("DELEGATOR_APPROVED_TOOLS", "web_search")
    try:
        code, result = run(
            fake_models,
            tmp_path,
            creative_kb,
            FakeResearcher(search_tool="web_search"),
            "--agents",
            str(agents(tmp_path / "agents", "web_search")),
        )
    finally:
        api.shutdown()
    verified = [f for f in result["findings"] if f["verified"]]
    assert code == 0 and {v for f in verified for v in f["values"]} == set(VALUES)
    assert all(
        f["source"]["url"].startswith("https://notes.example/") for f in verified
    )


def test_web_search_without_a_provider_is_one_line_saying_what_to_set(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    code, _ = run(
        fake_models,
        tmp_path,
        creative_kb,
        FakeResearcher(search_tool="web_search"),
        "--agents",
        str(agents(tmp_path / "agents", "web_search")),
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "TAVILY_API_KEY" in err


@pytest.mark.usefixtures("approved")
def test_the_subagent_graph_runs_an_mcp_agent_by_hand(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    context = Context(
        subagent_model=fake_models(FakeResearcher(search_tool="offered")),
        lead_model="extractive",
        kb_path=creative_kb,
        agents_dir=str(agents(tmp_path / "agents")),
        mcp_config=str(mcp_config(tmp_path)),
    )

    async def by_hand() -> dict[str, Any]:
        try:
            given: SubagentInput = {
                "question": QUESTION,
                "values": VALUES[:1],
                "agent": "researcher",
            }
            output = await subagent_graph.ainvoke(given, context=context)
        finally:
            await stop_servers()
        return dict(output)

    (result,) = asyncio.run(by_hand())["results"].values()
    assert result.status == "success"
    assert result.evidence and result.evidence[0].tool == "mcp__harbour__search"
    assert result.findings[0].source.passage_id == result.evidence[0].evidence_id


def test_a_run_whose_only_server_dies_verifies_nothing_and_exits_3(
    fake_models: Callable[[BaseChatModel], str],
    creative_kb: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DELEGATOR_APPROVED_TOOLS", "mcp__harbour__search")
    code, result = run(
        fake_models,
        tmp_path,
        creative_kb,
        FakeResearcher(search_tool="offered"),
        "--agents",
        str(agents(tmp_path / "agents")),
        "--mcp-config",
        str(mcp_config(tmp_path, HARBOUR_DIE_ON="veldmark")),
        "--set",
        "task_attempts=1",
    )
    assert code == 3
    assert result["tasks"] and all(t["status"] == "failed" for t in result["tasks"])
    assert not any(f["verified"] for f in result["findings"])
