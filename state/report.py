"""The final report and the numbers behind it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from state.findings import Source


class CoverageRow(BaseModel):
    """One row of the coverage table."""

    model_config = ConfigDict(frozen=True)

    value: str
    facet: str
    findings: int
    status: Literal["covered", "weak", "not covered"]


class Citation(BaseModel):
    """A numbered reference of the report."""

    model_config = ConfigDict(frozen=True)

    number: int
    source: Source


class RunSummary(BaseModel):
    """What the run cost and did, computed from its events and results."""

    model_config = ConfigDict(frozen=True)

    tasks: int = 0
    failures: int = 0
    rounds: int = 0
    coverage: float = 0.0
    findings: int = 0
    findings_dropped: int = Field(default=0, description="Failed verification.")
    citations_dropped: int = Field(
        default=0, description="Synthesis citation markers that named no source."
    )
    tokens: int = Field(default=0, description="All model tokens of the run.")
    lead_tokens: int = Field(default=0, description="Tokens of the lead's steps.")
    subagent_seconds: float = Field(default=0.0, description="Sum over all tasks.")
    critical_path_seconds: float = Field(
        default=0.0, description="Sum over rounds of the slowest task."
    )


class Report(BaseModel):
    """The rendered answer with its coverage table and unresolved gaps."""

    model_config = ConfigDict(frozen=True)

    markdown: str
    sections: tuple[str, ...] = ()
    citations: tuple[Citation, ...] = ()
    coverage_table: tuple[CoverageRow, ...] = ()
    unresolved_gaps: tuple[str, ...] = ()
    summary: RunSummary = RunSummary()
