"""Text from the knowledge base and from models renders inert in the report."""

from __future__ import annotations

import re

from roles.render import inert, number_citations, render_markdown
from state.findings import Finding, Source
from state.plan import CoveragePlan, Dimension, facets_for_values
from state.report import RunSummary, coverage_table

EVIL = (
    "Storms <script>alert(1)</script> hit [click](javascript:alert(1)) and "
    "![pixel](http://tracker.example/p.png) <img src=x onerror=alert(1)> "
    "[ref]: javascript:alert(2) \x1b[31mred\x07"
)


def test_hostile_text_renders_as_text() -> None:
    plan = CoveragePlan(
        question="Storms <b>2022</b>?",
        dimensions=(Dimension(name="storm", values=("Eunice <i>",)),),
        facets=facets_for_values("q", ["Eunice <i>"]),
    )
    finding = Finding(
        claim=EVIL,
        quote=EVIL,
        source=Source(
            doc_id="d",
            passage_id="d#0",
            title="<img src=x>",
            url="javascript:alert(3)",
            section="[s](javascript:alert(4))",
        ),
        facet_ids=("f0",),
        values=("Eunice <i>",),
        verified=True,
    )
    citations = number_citations(plan, [finding])
    table = coverage_table(plan, [finding], 1)
    markdown = render_markdown(
        plan, [finding], citations, table, RunSummary(), [], EVIL, None
    )
    assert "<script" not in markdown and "<img" not in markdown
    assert "<b>" not in markdown and "<i>" not in markdown
    assert not re.search(r"(?<!\\)\]\(", markdown)  # no link or image forms
    assert not re.search(r"(?m)^\s*\[[^\]]*\]:", markdown)  # no link definition
    assert "javascript:alert(3)" not in markdown  # a non-web source link is dropped
    assert "\x1b" not in markdown and "\x07" not in markdown
    assert "Storms &lt;script>alert(1)&lt;/script> hit" in markdown


def test_plain_text_and_citations_are_untouched() -> None:
    text = "Floods hit Pakistan in 2022 [1][2], costing $30 billion (est.)."
    assert inert(text) == text
    assert inert("Impact > United States") == "Impact > United States"


def test_a_finding_is_listed_under_the_facet_whose_value_it_covers() -> None:
    values = ["2023 Wagner Group plane crash", "2023 Emilia-Romagna floods"]
    plan = CoveragePlan(
        question="Which disasters struck in 2023?",
        dimensions=(Dimension(name="event", values=tuple(values)),),
        facets=facets_for_values("q", values),
    )
    floods = Finding(
        claim="Floods in Emilia-Romagna killed 17 people in May 2023.",
        quote="Floods in Emilia-Romagna killed 17 people in May 2023.",
        source=Source(
            doc_id="d",
            passage_id="d#0",
            title="2023 Emilia-Romagna floods",
            section="Impact",
        ),
        facet_ids=(
            plan.facets[0].id,
            plan.facets[1].id,
        ),  # the Wagner task found it first
        values=(values[1],),
        verified=True,
    )
    table = coverage_table(plan, [floods], 1)
    markdown = render_markdown(
        plan,
        [floods],
        number_citations(plan, [floods]),
        table,
        RunSummary(),
        [],
        None,
        None,
    )
    headings = re.findall(r"(?m)^## (.+)$", markdown)
    assert plan.facets[1].title in headings
    assert plan.facets[0].title not in headings
    section = markdown.split(f"## {plan.facets[1].title}")[1]
    assert "killed 17 people" in section.split("\n## ")[0]
