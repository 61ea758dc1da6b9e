"""A tool call a gate refused: what was asked, which rule, and why."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Denial(BaseModel):
    """A tool call a gate refused.

    Attributes:
        tool: The tool asked for.
        rule: The gate that refused it.
        reason: Why, in words the subagent is told.
        args: The call's arguments, as short JSON.
        needs_person: Whether a person may approve it (a dangerous tool under
            `dangerous_tools="ask"`).
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    rule: str
    reason: str
    args: str = ""
    needs_person: bool = False

    def message(self) -> str:
        """What the subagent is told instead of the tool's output."""
        return f"Denied by the {self.rule} gate: {self.reason}"
