"""What a subagent is, as its definition file declares it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from state.budget import Budget

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
    tools: tuple[str, ...] = Field(min_length=1)
    disallowed_tools: tuple[str, ...] = ()
    model: AgentModel = "subagent"
    max_turns: int = Field(default=6, ge=1, le=50)
    timeout_s: float = Field(default=60.0, gt=0)
    budget: Budget = Budget()
    fallback: str | None = Field(
        default=None,
        description="The agent that takes its tasks while its circuit is open.",
    )
    system_prompt: str = Field(min_length=1)

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The tools the agent may call: its list less the disallowed ones."""
        return tuple(t for t in self.tools if t not in self.disallowed_tools)
