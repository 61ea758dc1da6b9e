"""The one event type of a run: DELEGATE, RESULT, RETRY, ESCALATE, COVERAGE, GATE."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EventKind = Literal["DELEGATE", "RESULT", "RETRY", "ESCALATE", "COVERAGE", "GATE"]


class Event(BaseModel):
    """A structured, loggable step of the delegation protocol."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    fields: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    def log_line(self) -> str:
        """Render as `[KIND] key=value ...`, quoting free text."""
        parts = [f"[{self.kind}]"]
        for key, value in self.fields.items():
            if value is None:
                continue
            if isinstance(value, str) and (" " in value or not value):
                value = '"' + value.replace('"', "'") + '"'
            elif isinstance(value, float):
                value = f"{value:.2f}"
            parts.append(f"{key}={value}")
        return " ".join(parts)
