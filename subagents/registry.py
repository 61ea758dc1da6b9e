"""Subagent definitions: Markdown files with YAML front matter, validated."""

from __future__ import annotations

import functools
from pathlib import Path

import yaml
from pydantic import ValidationError

from state.agents import AgentManifest

DEFINITIONS = Path(__file__).parent / "definitions"


class DefinitionError(ValueError):
    """A definition file that is not a valid subagent."""


def load_definition(path: Path) -> AgentManifest:
    """Parse one definition: front matter fields, the body as system prompt."""
    text = path.read_text(encoding="utf-8")
    head, sep, body = text.removeprefix("---\n").partition("\n---\n")
    if not text.startswith("---\n") or not sep:
        raise DefinitionError(f"{path}: no YAML front matter between '---' lines")
    try:
        meta = yaml.safe_load(head) or {}
    except yaml.YAMLError as err:
        raise DefinitionError(f"{path}: front matter is not YAML: {err}") from err
    if not isinstance(meta, dict):
        raise DefinitionError(f"{path}: front matter must be a mapping")
    fields = {
        "agent_id": meta.pop("name", path.stem),
        "timeout_s": meta.pop("timeout", 60.0),
        "system_prompt": body.strip(),
        **meta,
    }
    try:
        return AgentManifest.model_validate(fields)
    except ValidationError as err:
        raise DefinitionError(f"{path}: {err}") from err


@functools.cache
def load_registry(folder: Path = DEFINITIONS) -> dict[str, AgentManifest]:
    """Every definition in `folder`, by agent id."""
    manifests = [load_definition(p) for p in sorted(folder.glob("*.md"))]
    registry = {m.agent_id: m for m in manifests}
    if len(registry) != len(manifests):
        raise DefinitionError(f"{folder}: two definitions share an agent id")
    if not registry:
        raise DefinitionError(f"{folder}: no subagent definitions")
    for manifest in manifests:
        fallback = manifest.fallback
        if fallback is not None and fallback not in registry:
            raise DefinitionError(
                f"{folder}: {manifest.agent_id}'s fallback {fallback!r} is not defined"
            )
        if fallback == manifest.agent_id:
            raise DefinitionError(f"{folder}: {fallback} cannot be its own fallback")
    return registry
