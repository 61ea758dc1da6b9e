"""`delegator serve` with the operator's MCP servers, over `langgraph-sdk`.

The operator sets `DELEGATOR_MCP_CONFIG`: a caller's run may use its servers
and no others, and can never name a configuration (a command) of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from tests.integration.servers import BIN, running
from tests.integration.test_mcp_tools import (
    NOTES,
    QUESTION,
    HarbourModel,
    agents,
    mcp_config,
)
from tests.openai_replay import ReplayServer

pytestmark = pytest.mark.integration

EVIL = """---
name: researcher
description: Researches with a server the operator never configured.
tools: [mcp__evil__search]
---
You are a research subagent.
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("operator")
    (folder / "agents").mkdir()
    agents(folder / "agents" / "harbour")
    (folder / "agents" / "evil").mkdir()
    (folder / "agents" / "evil" / "researcher.md").write_text(EVIL)
    env_of_server = {
        "OPENAI_API_KEY": "test",
        "DELEGATOR_MCP_CONFIG": str(mcp_config(folder)),
        "DELEGATOR_AGENT_DIRS": str(folder / "agents"),
        "DELEGATOR_APPROVED_TOOLS": "mcp__harbour__search",
        "DELEGATOR_KB_DIRS": str(tmp_path_factory.getbasetemp()),
    }
    with ReplayServer(HarbourModel()) as endpoint:
        env = {**env_of_server, "OPENAI_BASE_URL": endpoint.base_url}
        command = [str(BIN / "delegator"), "serve", "--port", "{port}", "--jobs", "2"]
        with running(command, env, folder / "serve.log") as server:
            yield server.url, folder


def run(url: str, kb: str, **context: Any) -> dict[str, Any]:
    """Run the research graph with this context; its output (or its error),
    with the thread's findings."""

    async def go() -> dict[str, Any]:
        api = get_client(url=url)
        thread = await api.threads.create()
        output = await api.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context={
                "lead_model": "openai:replay",
                "subagent_model": "openai:replay",
                "kb_path": kb,
                "max_rounds": 0,
                **context,
            },
            raise_error=False,
        )
        assert isinstance(output, dict)
        state = await api.threads.get_state(thread["thread_id"])
        values = state["values"]
        assert isinstance(values, dict)
        return {**output, "findings": values.get("findings", [])}

    return asyncio.run(go())


def test_a_configured_server_works(served: tuple[str, Path], creative_kb: str) -> None:
    url, folder = served
    output = run(url, creative_kb, agents_dir=str(folder / "agents" / "harbour"))
    assert "__error__" not in output, output
    assert output["report"]["citations"]
    assert {f["values"][0] for f in output["findings"]} == set(NOTES)
    assert all(
        f["source"]["passage_id"].startswith("tool:") for f in output["findings"]
    )


def test_a_server_not_in_the_operators_file_is_refused_in_one_line(
    served: tuple[str, Path], creative_kb: str
) -> None:
    url, folder = served
    output = run(url, creative_kb, agents_dir=str(folder / "agents" / "evil"))
    error = output["__error__"]
    assert error["error"] == "McpServerError"
    assert "MCP server 'evil' is not in" in error["message"]
    assert "\n" not in error["message"]


def test_a_caller_cannot_name_a_configuration_of_its_own(
    served: tuple[str, Path], creative_kb: str, tmp_path: Path
) -> None:
    url, folder = served
    own = tmp_path / "mine.json"
    own.write_text(json.dumps({"mcpServers": {"x": {"command": "touch"}}}))
    output = run(
        url,
        creative_kb,
        agents_dir=str(folder / "agents" / "harbour"),
        mcp_config=str(own),
    )
    error = output["__error__"]
    assert error["error"] == "ConfigError"
    assert "mcp_config may name only the operator's file" in error["message"]
