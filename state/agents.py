"""What a subagent is, as its definition file declares it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from state.budget import Budget

MCP_PREFIX = "mcp__"
"""Starts the name of an MCP server's tool (`mcp__<server>__<tool>`), or of all
of one server's tools (`mcp__<server>`)."""


def mcp_server_of(tool: str) -> str | None:
    """The MCP server a tool name names, or None for another tool."""
    if not tool.startswith(MCP_PREFIX):
        return None
    return tool.removeprefix(MCP_PREFIX).split("__")[0] or None


AgentModel = Literal["subagent", "lead", "extractive"]
"""Whose model an agent runs on; 'extractive' runs by rule, with no model."""


class AgentManifest(BaseModel):
    """A validated subagent definition."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent_id: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    version: str = "1"
    description: str = Field(min_length=1)
    domains: tuple[str, ...] = Field(
        default=(), description="What it is good at; capability routing reads them."
    )
    routable: bool = Field(
        default=True, description="Whether routing may choose it for a facet."
    )
    tools: tuple[str, ...] = Field(
        default=(),
        description="Built-in tools, the user's ('package.module:attribute') and "
        "MCP tools ('mcp__<server>__<tool>', or 'mcp__<server>' for all of them).",
    )
    disallowed_tools: tuple[str, ...] = ()
    mcp_servers: tuple[str, ...] = Field(
        default=(),
        description="MCP servers (of the MCP configuration) whose every tool it gets.",
    )
    model: AgentModel = "subagent"
    max_turns: int = Field(default=6, ge=1, le=50)
    timeout_s: float = Field(default=60.0, gt=0)
    budget: Budget = Budget()
    fallback: str | None = Field(
        default=None,
        description="The agent that takes its tasks while its circuit is open.",
    )
    system_prompt: str = Field(min_length=1)

    @model_validator(mode="after")
    def _has_tools(self) -> AgentManifest:
        if not self.tools and not self.mcp_servers:
            raise ValueError("an agent needs 'tools' or 'mcp_servers'")
        return self

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The tools the agent may call: its list less the disallowed ones."""
        return tuple(t for t in self.tools if self.allows(t))

    def allows(self, tool: str) -> bool:
        """Whether no entry of `disallowed_tools` names `tool` (or its MCP server)."""
        server = mcp_server_of(tool)
        whole = f"{MCP_PREFIX}{server}" if server else None
        return tool not in self.disallowed_tools and whole not in self.disallowed_tools

    @property
    def servers(self) -> tuple[str, ...]:
        """The MCP servers whose tools it uses."""
        named = (mcp_server_of(t) for t in self.allowed_tools)
        return tuple(dict.fromkeys([*self.mcp_servers, *filter(None, named)]))
