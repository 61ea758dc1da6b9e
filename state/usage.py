"""What model calls cost: tokens spent, and the largest prompt a model saw."""

from __future__ import annotations

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict


class Usage(BaseModel):
    """Tokens of some model calls, and the largest prompt among them.

    Attributes:
        tokens: Prompt and completion tokens of every call, added up.
        context: The largest prompt of any one call, in tokens: how much the
            model had to hold at once.
        calls: Model calls that answered.
    """

    model_config = ConfigDict(frozen=True)

    tokens: int = 0
    context: int = 0
    calls: int = 0

    @classmethod
    def of(cls, message: BaseMessage) -> Usage:
        """What one model answer reports: one call, and its tokens if it says."""
        usage = getattr(message, "usage_metadata", None)
        if not usage:
            return cls(calls=1)
        return cls(
            tokens=int(usage["total_tokens"]),
            context=int(usage.get("input_tokens", 0)),
            calls=1,
        )

    def __add__(self, other: Usage) -> Usage:
        """Both calls' usage: tokens add up, the larger prompt stands."""
        return Usage(
            tokens=self.tokens + other.tokens,
            context=max(self.context, other.context),
            calls=self.calls + other.calls,
        )
