"""Evidence a tool returned from outside the knowledge base, as code recorded it.

A knowledge-base passage is evidence by its id. Anything else a tool returns to
a subagent (an MCP tool's result, a fetched page, a user tool's output) is
recorded by code with an id derived from its tool and content, so that a
finding can cite it and verification can check the citation, exactly as for a
passage. Nothing a model writes becomes evidence.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

ID_PREFIX = "tool:"
"""Starts the id of evidence a tool returned; a passage id never does."""


class ToolEvidence(BaseModel):
    """The text one tool call returned, recorded by code.

    Attributes:
        evidence_id: Derived from the tool and the text (`evidence_id`).
        tool: The tool that returned it (`mcp__server__tool`, a built-in's or
            a user tool's name).
        args: The arguments it was called with, as JSON: shown, never taken
            as what the evidence is about (a model wrote them).
        url: Its source, when the tool says where it comes from.
        text: What the tool returned, as text.
    """

    model_config = ConfigDict(frozen=True)

    evidence_id: str = Field(pattern=rf"^{ID_PREFIX}")
    tool: str
    args: str = ""
    url: str | None = None
    text: str


def evidence_id(tool: str, text: str) -> str:
    """The id of `text` returned by `tool`: the same text, the same id."""
    digest = hashlib.sha256(f"{tool}\0{text}".encode()).hexdigest()[:16]
    return f"{ID_PREFIX}{tool}:{digest}"
