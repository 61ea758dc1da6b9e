"""Budgets: what a subagent or a run may spend, and when to wrap up."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

WRAP_UP_AT = 0.8
"""Share of a budget after which a subagent is told to finish with what it has."""


class Budget(BaseModel):
    """Limits on tokens, wall time and tool calls; 0 means no limit."""

    model_config = ConfigDict(frozen=True)

    tokens: int = Field(default=0, ge=0, description="Model tokens; 0 for no limit.")
    seconds: float = Field(default=0.0, ge=0.0, description="Wall time; 0 for none.")
    tool_calls: int = Field(default=0, ge=0, description="Tool calls; 0 for none.")

    def tighter(self, other: Budget) -> Budget:
        """Each limit the stricter of the two (a 0 gives way to the other)."""

        def least(a: float, b: float) -> float:
            return min(a, b) if a and b else a or b

        return Budget(
            tokens=int(least(self.tokens, other.tokens)),
            seconds=least(self.seconds, other.seconds),
            tool_calls=int(least(self.tool_calls, other.tool_calls)),
        )

    def wrap_up_reason(
        self, *, tokens: int, seconds: float, tool_calls: int, at: float = WRAP_UP_AT
    ) -> str | None:
        """Why to finish now: the first limit at least `at` spent, else None."""
        spent = (
            ("token", tokens, self.tokens),
            ("time", seconds, self.seconds),
            ("tool-call", tool_calls, self.tool_calls),
        )
        for name, used, limit in spent:
            if limit and used >= at * limit:
                shown = f"{used:.0f} of {limit:g}" if name == "time" else f"{used} of"
                if name != "time":
                    shown += f" {limit}"
                return f"its {name} budget was nearly spent ({shown})"
        return None
