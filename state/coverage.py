"""Coverage as data: what a round of delegation reached and what it missed."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GapReport(BaseModel):
    """The outcome of one `gap_check`: coverage of every plan value."""

    model_config = ConfigDict(frozen=True)

    round: int
    covered: tuple[str, ...] = ()
    uncovered: tuple[str, ...] = ()
    weak: tuple[str, ...] = Field(
        default=(), description="Values with findings, but fewer than required."
    )
    new_values: tuple[str, ...] = Field(
        default=(), description="Values the independent enumeration added."
    )
    coverage: float = Field(ge=0.0, le=1.0)
    improved: bool = Field(description="Whether this round added coverage or values.")
