from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel

from runtime.context import Context
from subagents.llm_agent import ToolCalling
from subagents.registry import (
    DefinitionError,
    load_definition,
    load_folder,
    load_registry,
)
from subagents.services import services
from subagents.tools import DELEGATING_TOOLS, TOOL_NAMES
from tests.unit.fakes import FakeResearcher


def test_researcher_definition_is_shipped() -> None:
    researcher = load_registry()["researcher"]
    assert researcher.allowed_tools == ("search", "read")
    assert "handle" in researcher.system_prompt  # findings point at evidence


def test_definition_fields_and_prompt(tmp_path: Path) -> None:
    path = tmp_path / "critic.md"
    path.write_text(
        "---\nname: critic\ndescription: Checks claims.\ntools: [search, read]\n"
        "disallowed_tools: [read]\nmax_turns: 2\ntimeout: 5\n---\n"
        "You check claims.\n"
    )
    manifest = load_definition(path)
    assert manifest.agent_id == "critic"
    assert manifest.allowed_tools == ("search",)
    assert manifest.timeout_s == 5
    assert manifest.system_prompt == "You check claims."


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter", "no YAML front matter"),
        ("---\n: [\n---\nbody", "not YAML"),
        ("---\n- a list\n---\nbody", "must be a mapping"),
        ("---\nname: x\ndescription: d\ntools: []\n---\nbody", "tools"),
        ("---\nname: Bad Name\ndescription: d\ntools: [search]\n---\nbody", "agent_id"),
        ("---\nname: x\ndescription: d\ntools: [search]\n---\n", "system_prompt"),
        ("---\nname: x\ntools: [search]\n---\nbody", "description: Field required"),
        (
            "---\nname: x\ndescription: d\n---\nbody",
            "an agent needs 'tools' or 'mcp_servers'",
        ),
        (
            "---\nname: x\ndescription: d\ntools: [shell]\n---\nb",
            "unknown tool 'shell'",
        ),
        ("---\nname: x\ndescription: d\ntools: [task]\n---\nb", "cannot delegate"),
        (
            "---\nname: x\ndescription: d\ntools: [search]\ncolour: red\n---\nb",
            "colour: Extra inputs are not permitted",
        ),
        ("---\nname: x\ndescription: d\ntools: [search\n---\nb", "not YAML"),
    ],
)
def test_invalid_definitions_say_why(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "agent.md"
    path.write_text(text)
    with pytest.raises(DefinitionError, match=re.escape(message)) as refused:
        load_definition(path)
    assert str(refused.value).startswith(str(path))


def test_the_shipped_definitions() -> None:
    agents = load_registry()
    assert {"researcher", "events_researcher", "fact_checker", "extractor"} <= set(
        agents
    )
    assert agents["fact_checker"].allowed_tools == ("read",)  # reads only
    assert not agents["fact_checker"].routable and not agents["extractor"].routable
    assert agents["events_researcher"].domains


def test_a_user_definition_adds_an_agent_and_overrides_a_built_in(
    tmp_path: Path,
) -> None:
    (tmp_path / "poet.md").write_text(
        "---\nname: poet\ndescription: Poems.\ndomains: [poetry]\n"
        "tools: [search, read]\n---\nYou research poems.\n"
    )
    (tmp_path / "researcher.md").write_text(
        "---\nname: researcher\ndescription: Mine.\ntools: [search]\n---\nMine.\n"
    )
    agents = load_registry(str(tmp_path))
    assert agents["poet"].domains == ("poetry",)
    assert agents["researcher"].description == "Mine."  # the user's wins
    assert "events_researcher" in agents  # the other built-ins stay


def test_a_bad_user_folder_fails_at_load(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="no such folder"):
        load_registry(str(tmp_path / "missing"))
    (tmp_path / "a.md").write_text(
        "---\nname: a\ndescription: d\ntools: [task]\n---\nb"
    )
    with pytest.raises(DefinitionError, match="a.md: tool 'task' hands work"):
        load_registry(str(tmp_path))


def test_no_subagent_can_hold_a_delegation_tool(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    model = fake_models(FakeResearcher())
    for manifest in load_registry().values():
        by_rule = "search" in manifest.allowed_tools  # what runs with no model
        for spec in (model, "extractive") if by_rule else (model,):
            context = Context(subagent_model=spec, lead_model=spec, kb_path=creative_kb)
            bundle = asyncio.run(services(context))
            loop = asyncio.run(bundle.loop(manifest.agent_id))
            held = set(loop.tools)
            if isinstance(loop.driver, ToolCalling):  # what the model is offered
                assert set(loop.driver.names) == held
            assert held <= set(manifest.allowed_tools) <= set(TOOL_NAMES)
            assert not held & DELEGATING_TOOLS


def test_a_definition_folder_holding_a_fifo_or_a_bomb_fails_fast_and_echoes_nothing(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "evil.md")
    with pytest.raises(DefinitionError, match="not a regular file"):
        load_folder(fifo)
    bomb = tmp_path / "bomb"
    bomb.mkdir()
    laughs = "\n".join(
        f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]" for n in range(1, 9)
    )
    (bomb / "agent.md").write_text(f"---\nl0: &l0 lol\n{laughs}\n---\nbody\n")
    with pytest.raises(DefinitionError, match="not allowed in a definition"):
        load_folder(bomb)
    big = tmp_path / "big"
    big.mkdir()
    (big / "agent.md").write_text("---\nname: x\n---\n" + "x" * 100_000)
    with pytest.raises(DefinitionError, match="larger than"):
        load_folder(big)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "agent.md").write_text(
        "---\nname: x\ndescription: d\ntools: [search]\n"
        "api_key: sk-SECRET-1234\n---\nb\n"
    )
    with pytest.raises(DefinitionError) as refused:
        load_folder(secret)
    assert "api_key" in str(refused.value) and "SECRET" not in str(refused.value)
