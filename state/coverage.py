"""Coverage as data: what a round of delegation reached and what it missed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from state.findings import Finding


def count_by_value(findings: Iterable[Finding]) -> Counter[str]:
    """Verified findings per dimension value: the measure of coverage."""
    return Counter(v for f in findings if f.verified for v in f.values)


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
