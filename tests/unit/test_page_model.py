"""The report page's model and HTML, on small runs built by hand."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest

from presentation.page import eval_page, report_page
from presentation.page_model import (
    Outcome,
    coverage_matrix,
    eval_page_model,
    markdown_blocks,
    outcome,
    report_page_model,
    split_passage,
)
from state.coverage import RoundCoverage
from state.findings import Finding, Source
from state.plan import CoveragePlan, Dimension, facets_for_values
from state.report import CoverageRow, RunSummary
from state.result import RunResult
from state.tasks import TaskResult

QUESTION = "Which storms struck?"
START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
PASSAGES = {
    "Eunice#0": "Storm Eunice struck in February.  It was\nVERY windy in London.",
    "Ciaran#0": "Storm Ciaran struck in November.",
}


def finding(
    value: str,
    passage_id: str,
    quote: str,
    *,
    title: str = "",
    url: str | None = "https://en.wikipedia.org/wiki/Storm",
    claim: str = "",
) -> Finding:
    return Finding(
        claim=claim or quote,
        quote=quote,
        source=Source(
            doc_id=passage_id.split("#")[0],
            passage_id=passage_id,
            title=title or value,
            url=url,
            section="Summary",
        ),
        facet_ids=(f"f{['Eunice', 'Ciaran', 'Otto'].index(value)}",),
        values=(value,),
        verified=True,
    )


def task(
    round_no: int,
    value: str,
    *,
    status: Literal["success", "partial", "failed"] = "success",
    found: Sequence[Finding] = (),
    errors: Sequence[str] = (),
    start: float = 0.0,
    seconds: float = 1.0,
    attempts: int = 1,
    escalation: Literal["retry", "hint", "skip", "abort"] | None = None,
) -> TaskResult:
    return TaskResult(
        task_id=f"{round_no}-{value}",
        agent_id="researcher",
        facet_id=value,
        round=round_no,
        values=(value,),
        status=status,
        findings=tuple(found),
        errors=tuple(errors),
        started_at=START + timedelta(seconds=start),
        execution_time_s=seconds,
        tokens=100,
        attempts=attempts,
        escalation=escalation,
    )


def run(
    *,
    findings: Sequence[Finding],
    tasks: Sequence[TaskResult],
    coverage: Sequence[RoundCoverage],
    values: Sequence[str] = ("Eunice", "Ciaran", "Otto"),
    report: str = "",
) -> RunResult:
    """A result as `delegator research --json` writes it."""
    plan = CoveragePlan(
        question=QUESTION,
        dimensions=(Dimension(name="storm", values=tuple(values)),),
        facets=facets_for_values(QUESTION, values),
    )
    table = [
        CoverageRow(
            value=v,
            dimension="storm",
            facet=v,
            findings=sum(v in f.values for f in findings),
            status="covered" if any(v in f.values for f in findings) else "not covered",
        )
        for v in values
    ]
    return RunResult(
        thread_id="t",
        question=QUESTION,
        report=report,
        plan=plan,
        findings=tuple(findings),
        passages=PASSAGES,
        coverage=tuple(coverage),
        coverage_table=tuple(table),
        tasks=tuple(tasks),
        summary=RunSummary(tasks=len(tasks), rounds=len(coverage)),
    )


EUNICE = finding("Eunice", "Eunice#0", "very  windy in london")
CIARAN = finding("Ciaran", "Ciaran#0", "Storm Ciaran struck in November.")


def two_rounds() -> RunResult:
    """Eunice found in round 0; Ciaran failed, then found in round 1; Otto added."""
    return run(
        findings=[EUNICE, CIARAN],
        tasks=[
            task(0, "Eunice", found=[EUNICE], seconds=2.0),
            task(
                0, "Ciaran", status="failed", errors=["timed out", "again"], start=0.1
            ),
            task(1, "Ciaran", found=[CIARAN], start=3.0, seconds=0.5, attempts=2),
            task(1, "Otto", status="partial", errors=["nothing found"], start=3.0),
        ],
        coverage=[
            RoundCoverage(
                round=0,
                covered=("Eunice",),
                uncovered=("Ciaran",),
                coverage=0.5,
                improved=True,
            ),
            RoundCoverage(
                round=1,
                covered=("Eunice", "Ciaran"),
                uncovered=("Otto",),
                new_values=("Otto",),
                coverage=2 / 3,
                improved=True,
            ),
        ],
    )


def test_matrix_rows_are_the_coverage_table_and_columns_the_rounds() -> None:
    result = two_rounds()
    matrix = report_page_model(result).matrix
    assert [r.value for r in matrix.rows] == [r.value for r in result.coverage_table]
    assert matrix.rounds == (0, 1)
    assert all(len(r.cells) == 2 for r in matrix.rows)


def test_matrix_rows_are_grouped_by_kind_and_the_page_names_each_group() -> None:
    values = [("Eunice", "storms"), ("Turkey", "earthquakes"), ("Ciaran", "storms")]
    matrix = coverage_matrix(values, [], [], [])
    assert [(r.value, r.group) for r in matrix.rows] == [
        ("Eunice", "storms"),
        ("Ciaran", "storms"),
        ("Turkey", "earthquakes"),
    ]
    page = report_page(two_rounds())
    groups = re.findall(r'<th scope="rowgroup"[^>]*>([^<]*)</th>', page)
    assert groups and set(groups) == {r.dimension for r in two_rounds().coverage_table}


def test_each_cell_is_the_state_of_its_value_after_its_round() -> None:
    rows = {r.value: r.cells for r in report_page_model(two_rounds()).matrix.rows}
    eunice, ciaran, otto = rows["Eunice"], rows["Ciaran"], rows["Otto"]
    assert [(c.state, c.findings) for c in eunice] == [("covered", 1), ("covered", 1)]
    assert (ciaran[0].state, ciaran[0].reason) == ("failed", "timed out")
    assert (ciaran[1].state, ciaran[1].findings) == ("covered", 1)
    assert [c.state for c in otto] == ["not planned yet", "uncovered"]


def test_a_finding_counts_from_the_earliest_round_that_claimed_its_span() -> None:
    late = finding("Eunice", "Eunice#0", "Storm Eunice struck in February.")
    tasks = [
        task(0, "Eunice", found=[EUNICE]),
        task(1, "Eunice", found=[late]),
        task(2, "Eunice", found=[late]),
    ]
    rounds = [
        RoundCoverage(round=n, covered=("Eunice",), coverage=1.0, improved=True)
        for n in range(3)
    ]
    cells = (
        coverage_matrix([("Eunice", "storms")], rounds, tasks, [EUNICE, late])
        .rows[0]
        .cells
    )
    assert [c.findings for c in cells] == [1, 2, 2]


def test_a_value_with_too_few_findings_is_weak() -> None:
    rounds = [
        RoundCoverage(
            round=0,
            uncovered=("Eunice",),
            weak=("Eunice",),
            coverage=0.0,
            improved=True,
        )
    ]
    tasks = [task(0, "Eunice", found=[EUNICE])]
    cell = (
        coverage_matrix([("Eunice", "storms")], rounds, tasks, [EUNICE])
        .rows[0]
        .cells[0]
    )
    assert (cell.state, cell.findings) == ("weak", 1)


def test_one_bar_per_task_timed_from_the_first_start() -> None:
    result = two_rounds()
    bars = report_page_model(result).bars
    assert len(bars) == len(result.tasks)
    assert [(b.round, b.facet, b.outcome) for b in bars] == [
        (0, "Eunice", "success"),
        (0, "Ciaran", "failed"),
        (1, "Ciaran", "retried"),
        (1, "Otto", "partial"),
    ]
    assert [(b.start_s, b.duration_s) for b in bars][2] == (3.0, 0.5)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"status": "failed", "attempts": 3, "escalation": "skip"}, "failed"),
        ({"status": "partial", "escalation": "hint"}, "escalated"),
        ({"attempts": 2}, "retried"),
        ({"status": "partial"}, "partial"),
        ({}, "success"),
    ],
)
def test_outcome(given: dict[str, Any], expected: Outcome) -> None:
    assert outcome(task(0, "Eunice", **given)) == expected


def test_the_quote_is_marked_in_its_passage_case_and_spacing_aside() -> None:
    evidence = report_page_model(two_rounds()).evidence
    eunice = next(e for e in evidence if e.title == "Eunice")
    assert eunice.before == "Storm Eunice struck in February.  It was\n"
    assert eunice.marked == "VERY windy in London"
    assert eunice.after == "."
    assert split_passage("Nothing like it.", "windy") == ("Nothing like it.", "", "")


def test_citations_are_numbered_as_the_report_numbers_them() -> None:
    result = two_rounds()
    result = result.model_copy(update={"findings": result.findings[::-1]})
    evidence = report_page_model(result).evidence
    assert [(e.number, e.title) for e in evidence] == [(1, "Eunice"), (2, "Ciaran")]


def test_a_hostile_source_is_escaped_and_a_script_url_is_no_link() -> None:
    hostile = finding(
        "Eunice",
        "Eunice#0",
        "very windy",
        title="<script>alert(1)</script>",
        url="javascript:alert(1)",
        claim='It was windy" onmouseover="alert(2)',
    )
    result = run(
        findings=[hostile],
        tasks=[task(0, "Eunice", found=[hostile])],
        coverage=[
            RoundCoverage(round=0, covered=("Eunice",), coverage=1.0, improved=True)
        ],
        values=("Eunice",),
        report="# Storms\n\n- [click](javascript:alert(1)) <javascript:alert(1)>\n",
    )
    assert report_page_model(result).evidence[0].url is None
    page = report_page(result)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'onmouseover="' not in page
    assert re.findall(r'href="([^"#][^"]*)"', page) == []
    assert "<link" not in page and " src=" not in page and "url(" not in page


def test_only_the_sources_web_addresses_become_links() -> None:
    report = (
        "# Storms\n\nCoverage: **1 of 1**.\n\n## Sources\n\n"
        "1. Eunice, Summary <https://en.wikipedia.org/wiki/Storm>\n"
        "2. Other <https://example.com/x>\n"
    )
    result = run(
        findings=[EUNICE],
        tasks=[task(0, "Eunice", found=[EUNICE])],
        coverage=[
            RoundCoverage(round=0, covered=("Eunice",), coverage=1.0, improved=True)
        ],
        values=("Eunice",),
        report=report,
    )
    links = re.findall(r'href="([^"#][^"]*)"', report_page(result))
    assert set(links) == {"https://en.wikipedia.org/wiki/Storm"}


def test_markdown_blocks() -> None:
    blocks = markdown_blocks(
        "# Q\n\nA line\nand more.\n\n## Part\n\n- one [1]\n- two\n  goes on\n\n"
        "| Value | Status |\n| --- | --- |\n| a \\| b | covered |\n\n"
        "3. x\n4. y\n"
    )
    assert [(b.kind, b.level, b.text) for b in blocks[:3]] == [
        ("heading", 1, "Q"),
        ("paragraph", 0, "A line and more."),
        ("heading", 2, "Part"),
    ]
    assert blocks[3].items == ("one [1]", "two goes on")
    assert blocks[4].rows == (("Value", "Status"), ("a \\| b", "covered"))
    assert (blocks[5].kind, blocks[5].start, blocks[5].items) == (
        "numbered",
        3,
        ("x", "y"),
    )


SCORES: list[dict[str, Any]] = [
    {
        "case_id": "storms",
        "kind": "breadth",
        "max_rounds": 0,
        "group_coverage": 0.5,
        "missing_groups": ["floods"],
        "tasks": 2,
        "wall_seconds": 1.0,
        "error": None,
    },
    {
        "case_id": "storms",
        "kind": "breadth",
        "max_rounds": 3,
        "group_coverage": 1.0,
        "missing_groups": [],
        "tasks": 6,
        "wall_seconds": 2.5,
        "error": None,
    },
    {
        "case_id": "<b>odd</b>",
        "kind": "outline",
        "max_rounds": 0,
        "error": "<script>alert(1)</script>",
    },
]


def test_eval_cases_set_no_redelegation_beside_the_most_rounds() -> None:
    storms, odd = eval_page_model(SCORES).cases
    assert storms.without and storms.without.missing_groups == ("floods",)
    assert storms.redelegated and storms.redelegated.max_rounds == 3
    metrics = {m.label: (m.without, m.redelegated) for m in storms.metrics}
    assert metrics["group coverage"] == (0.5, 1.0)
    assert metrics["tasks"] == (2, 6)
    assert odd.redelegated is None
    page = eval_page(SCORES)
    assert "<b>odd</b>" not in page and "<script>alert(1)" not in page
    assert "+0.50" in page


def test_a_refused_run_shows_why_beside_its_zero_recall() -> None:
    refused = {
        "case_id": "briefing",
        "kind": "outline",
        "max_rounds": 0,
        "heading_soft_recall": 0.0,
        "refused": "nothing in the knowledge base matches 'Zyxqvor'",
        "error": None,
    }
    (case,) = eval_page_model([refused]).cases
    assert case.without and case.without.refused and case.without.error is None
    page = eval_page([refused])
    assert '<th scope="row">refused</th>' in page
    assert "nothing in the knowledge base matches &#x27;Zyxqvor&#x27;" in page
