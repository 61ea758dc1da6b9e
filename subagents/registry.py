"""Subagent definitions: Markdown files with YAML front matter, validated.

The built-in definitions live in `subagents/definitions/`; a user's folder
(`--agents DIR`, the context's `agents_dir`) adds more, and a user definition
with a built-in's name replaces it. A file that is not a valid subagent fails
at load, naming the file and the reason: an unknown built-in tool, a user tool
(`package.module:attribute`) that cannot be loaded or is outside the packages
`DELEGATOR_TOOL_PACKAGES` allows, or a malformed MCP tool name.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from runtime.imports import ImportRefusedError
from runtime.paths import InputFileError, read_input
from runtime.reliability import describe
from state.agents import MCP_PREFIX, AgentManifest, mcp_server_of
from subagents.tools import DELEGATING_TOOLS, TOOL_NAMES
from subagents.user_tools import is_user_tool, user_tool

DEFINITIONS = Path(__file__).parent / "definitions"


class DefinitionError(ValueError):
    """A definition file that is not a valid subagent."""


MAX_DEFINITION_BYTES = 64 * 1024
"""Larger definition files are refused unread."""


class _NoAliases(yaml.SafeLoader):
    """YAML without anchors and aliases: no definition can expand to gigabytes."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("aliases (*name) are not allowed in a definition")
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if getattr(event, "anchor", None):
            raise yaml.YAMLError("anchors (&name) are not allowed in a definition")
        return super().compose_node(parent, index)


def read_text(path: Path) -> str:
    """A definition file's text: a regular file, at most MAX_DEFINITION_BYTES.

    A FIFO or device is never opened (a read could wait forever).
    """
    try:
        return read_input(path, MAX_DEFINITION_BYTES).decode("utf-8")
    except InputFileError as err:
        raise DefinitionError(str(err)) from err
    except UnicodeDecodeError as err:
        raise DefinitionError(f"{path}: not UTF-8: {describe(err)}") from err


def load_definition(path: Path) -> AgentManifest:
    """Parse one definition: front matter fields, the body as system prompt.

    An error names the file and what is wrong, never the values it holds.
    """
    text = read_text(path)
    head, sep, body = text.removeprefix("---\n").partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        raise DefinitionError(f"{path}: no YAML front matter between '---' lines")
    try:
        meta = yaml.load(head, Loader=_NoAliases) or {}  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as err:
        raise DefinitionError(f"{path}: front matter is not YAML: {err}") from err
    if not isinstance(meta, dict):
        raise DefinitionError(f"{path}: front matter must be a mapping")
    for tool in [*_names(meta.get("tools")), *_names(meta.get("disallowed_tools"))]:
        if tool in DELEGATING_TOOLS:
            raise DefinitionError(
                f"{path}: tool {tool!r} hands work to another agent; a subagent "
                "cannot delegate"
            )
        problem = tool_problem(tool)
        if problem:
            raise DefinitionError(f"{path}: {problem}")
    fields = {
        "agent_id": meta.pop("name", path.stem),
        "timeout_s": meta.pop("timeout", 60.0),
        "system_prompt": body.strip(),
        **meta,
    }
    try:
        return AgentManifest.model_validate(fields)
    except ValidationError as err:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'definition'}: {e['msg']}"
            for e in err.errors(include_input=False, include_url=False)
        )
        raise DefinitionError(f"{path}: {problems}") from err


def tool_problem(tool: str) -> str | None:
    """Why a definition cannot name `tool`, or None when it can."""
    if tool.startswith(MCP_PREFIX):
        if mcp_server_of(tool) is None:
            return f"tool {tool!r} names no MCP server ('mcp__<server>__<tool>')"
        return None
    if is_user_tool(tool):
        try:
            user_tool(tool)
        except ImportRefusedError as err:
            return str(err)
        return None
    if tool not in TOOL_NAMES:
        return (
            f"unknown tool {tool!r}; the tools are {', '.join(TOOL_NAMES)}, the "
            "user's ('package.module:attribute') and MCP servers' ('mcp__<server>')"
        )
    return None


def _names(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def load_folder(folder: Path) -> dict[str, AgentManifest]:
    """Every definition in `folder`, by agent id."""
    if not folder.is_dir():
        raise DefinitionError(f"{folder}: no such folder of subagent definitions")
    manifests = [load_definition(p) for p in sorted(folder.glob("*.md"))]
    registry = {m.agent_id: m for m in manifests}
    if len(registry) != len(manifests):
        raise DefinitionError(f"{folder}: two definitions share an agent id")
    return registry


async def registered(user_folder: str = "") -> dict[str, AgentManifest]:
    """`load_registry` for async code: read in a worker thread the first time.

    Once a folder's definitions are loaded, they are returned at once, with no
    thread hop (a fan-out asks for them once per subagent).
    """
    loaded = _LOADED.get(user_folder)
    if loaded is None:
        loaded = await asyncio.to_thread(load_registry, user_folder)
    return loaded


_LOADED: dict[str, dict[str, AgentManifest]] = {}
"""Each folder's definitions, read once."""


def load_registry(user_folder: str = "") -> dict[str, AgentManifest]:
    """The built-in definitions, with a user's folder added over them; read once."""
    loaded = _LOADED.get(user_folder)
    if loaded is None:
        loaded = _LOADED[user_folder] = read_registry(user_folder)
    return loaded


def read_registry(user_folder: str) -> dict[str, AgentManifest]:
    """The built-in definitions and a user's folder, read from their files."""
    registry = load_folder(DEFINITIONS)
    if user_folder:
        registry |= load_folder(Path(user_folder))
    if not registry:
        raise DefinitionError("no subagent definitions")
    for manifest in registry.values():
        fallback = manifest.fallback
        if fallback is not None and fallback not in registry:
            raise DefinitionError(
                f"{manifest.agent_id}'s fallback {fallback!r} is not defined"
            )
        if fallback == manifest.agent_id:
            raise DefinitionError(f"{fallback} cannot be its own fallback")
    return registry
