from __future__ import annotations

from pathlib import Path

import pytest

from subagents.registry import DefinitionError, load_definition, load_registry


def test_researcher_definition_is_shipped() -> None:
    researcher = load_registry()["researcher"]
    assert researcher.allowed_tools == ("search", "read")
    assert "verbatim" in researcher.system_prompt


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
    ],
)
def test_invalid_definitions_say_why(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "agent.md"
    path.write_text(text)
    with pytest.raises(DefinitionError, match=message):
        load_definition(path)
