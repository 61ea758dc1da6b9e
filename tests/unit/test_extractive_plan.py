"""The extractive plan: what the search matched, of the question's period."""

from __future__ import annotations

import asyncio
from pathlib import Path

from roles.plan import MATCHED_DOCUMENTS, CorpusPlanner
from runtime.kb import KnowledgeBase, ingest

DOCS = {
    "Valley_flood_2019": "# Valley flood\n\nThe Valley flood of 2019 drowned farms.\n",
    "Coast_flood_2022": "# Coast flood\n\nThe Coast flood of 2022 drowned towns.\n",
    "River_flood_2023": "# River flood\n\nIn 2023 the river flood drowned fields.\n",
    "Delta_flood": "# Delta flood\n\nThe Delta flood drowned a delta.\n",
}


def test_documents_outside_the_question_period_are_no_values(tmp_path: Path) -> None:
    for name, text in DOCS.items():
        (tmp_path / f"{name}.md").write_text(text)
    ingest(tmp_path / "kb.sqlite", [tmp_path])
    planner = CorpusPlanner(KnowledgeBase(tmp_path / "kb.sqlite"), 5)
    planned = asyncio.run(planner.plan("Which floods drowned in 2022 and 2023?"))
    (dimension,) = planned.plan.dimensions
    assert dimension.name == MATCHED_DOCUMENTS
    assert set(dimension.values) == {"Coast flood", "River flood"}
    anytime = asyncio.run(planner.plan("Which floods drowned?")).plan
    assert set(anytime.values) == {
        "Valley flood",
        "Coast flood",
        "River flood",
        "Delta flood",
    }


def test_a_question_that_is_a_title_plans_without_refusing_itself(
    freshwiki_kb: str,
) -> None:
    planner = CorpusPlanner(KnowledgeBase(freshwiki_kb), 5)
    plan = asyncio.run(planner.plan("2022 West Java earthquake")).plan
    assert "2022 West Java earthquake" not in plan.values
