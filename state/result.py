"""What a finished run hands out: the result `--json` writes and the page reads."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from state.coverage import RoundCoverage
from state.events import Event
from state.findings import Finding
from state.plan import CoveragePlan
from state.report import CoverageRow, RunSummary
from state.tasks import TaskResult


class RunResult(BaseModel):
    """Everything a run produced: the report and every number behind it.

    `delegator research --json` writes it; `delegator show` and the report
    page read it back, so a page is a function of a written result.
    """

    model_config = ConfigDict(frozen=True)

    thread_id: str = Field(description="The thread the run was checkpointed on.")
    question: str
    report: str = Field(description="The report, as Markdown.")
    plan: CoveragePlan
    findings: tuple[Finding, ...] = ()
    passages: dict[str, str] = Field(
        default_factory=dict, description="The text of each cited passage, by id."
    )
    coverage: tuple[RoundCoverage, ...] = Field(
        default=(), description="The coverage after each round."
    )
    coverage_table: tuple[CoverageRow, ...] = ()
    min_findings_per_value: int = Field(
        default=1, description="Verified findings a value needed to count as covered."
    )
    uncovered: tuple[str, ...] = Field(
        default=(), description="Values the run left uncovered, and why."
    )
    tasks: tuple[TaskResult, ...] = Field(
        default=(), description="Every task's result, in the order they were sent."
    )
    summary: RunSummary = Field(default_factory=RunSummary)
    events: tuple[Event, ...] = ()
