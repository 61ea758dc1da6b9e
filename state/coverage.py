"""Coverage as data: the rule that says a value is covered, and each round's tally."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from state.findings import Finding

ValueStatus = Literal["covered", "weak", "not covered"]


def count_by_value(findings: Iterable[Finding]) -> Counter[str]:
    """Verified findings per dimension value: the measure of coverage."""
    return Counter(v for f in findings if f.verified for v in f.values)


def status_of(findings: int, need: int) -> ValueStatus:
    """The coverage rule: `need` verified findings cover a value; fewer are weak."""
    if findings >= need:
        return "covered"
    return "weak" if findings else "not covered"


class RoundCoverage(BaseModel):
    """Coverage of every plan value after one round, as `gap_check` measured it."""

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
    coverage: float | None = Field(
        ge=0.0, le=1.0, description="Share of values covered; None with no values."
    )
    findings: int = Field(
        default=0, description="Verified findings so far, counted once per value."
    )
    improved: bool = Field(description="Whether this round added verified findings.")
    stopped: str | None = Field(
        default=None, description="Why delegation stopped after this round, if it did."
    )

    @classmethod
    def measure(
        cls,
        values: tuple[str, ...],
        findings: Iterable[Finding],
        *,
        need: int,
        round_no: int,
        new_values: tuple[str, ...],
        previous: RoundCoverage | None,
    ) -> RoundCoverage:
        """Apply the coverage rule to every value after round `round_no`.

        A round improved on the one before only if it added verified findings:
        values an enumeration adds are no gain.
        """
        verified = [f for f in findings if f.verified]
        counts = count_by_value(verified)
        status = {v: status_of(counts[v], need) for v in values}
        covered = tuple(v for v in values if status[v] == "covered")
        return cls(
            round=round_no,
            covered=covered,
            uncovered=tuple(v for v in values if status[v] != "covered"),
            weak=tuple(v for v in values if status[v] == "weak"),
            new_values=new_values,
            coverage=len(covered) / len(values) if values else None,
            findings=sum(counts.values()),
            improved=previous is None or sum(counts.values()) > previous.findings,
        )
