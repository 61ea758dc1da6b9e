"""The extractive plan: what the search matched, of the question's period."""

from __future__ import annotations

import asyncio
from pathlib import Path

from roles.plan import CorpusPlanner, of_one_kind
from runtime.kb import KnowledgeBase, Passage, ingest
from runtime.kinds import OTHERS, document_kinds

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
    assert dimension.name == OTHERS
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


def film(title: str, extra: str = "") -> str:
    return (
        f"# {title}\n\n{title} is a 2022 drama film directed and produced for "
        "cinema release.\n\n## Plot\n\nA family keeps a secret.\n\n## Cast\n\n"
        f"Actors star.\n\n## Reception\n\nCritics praised the film.\n{extra}"
    )


def storm(title: str, extra: str = "") -> str:
    return (
        f"# {title}\n\n{title} was a windstorm with gusts that flooded the coast."
        "\n\n## Meteorological history\n\nA low deepened.\n\n## Impact\n\nRoofs "
        f"fell.\n{extra}"
    )


KINDS = {
    "Harbor_Lights": film("Harbor Lights"),
    "Quiet_Orchard": film("Quiet Orchard", "\n## Legacy\n\nIt is remembered.\n"),
    "Night_Ferry": film("Night Ferry"),
    "Storm_Ada": storm("Storm Ada"),
    "Storm_Bea": storm("Storm Bea", "\n## Legacy\n\nIt is remembered.\n"),
}


def test_a_document_of_another_kind_gives_its_place_to_one_of_the_plans(
    tmp_path: Path,
) -> None:
    for name, text in KINDS.items():
        (tmp_path / f"{name}.md").write_text(text)
    ingest(tmp_path / "kb.sqlite", [tmp_path])
    kinds = document_kinds(KnowledgeBase(tmp_path / "kb.sqlite"))
    ranked = [
        Passage(f"{name}#0", name, name, None, "Summary", "", score=10.0 - n)
        for n, name in enumerate(
            ["Harbor_Lights", "Storm_Ada", "Quiet_Orchard", "Storm_Bea", "Night_Ferry"]
        )
    ]
    films = ["Harbor_Lights", "Quiet_Orchard", "Night_Ferry"]
    assert kinds.core(["Harbor_Lights", "Storm_Ada", "Quiet_Orchard"]) == films[:2]
    assert kinds.agreeing(["Storm_Bea", "Night_Ferry"], films[:2]) == ["Night_Ferry"]
    chosen = of_one_kind(kinds, ranked, 3)
    assert [d.doc_id for d in chosen] == films
    # With no document of the plan's kind left, the outlier keeps its place.
    kept = of_one_kind(kinds, ranked[:3], 3)
    assert [d.doc_id for d in kept] == ["Harbor_Lights", "Storm_Ada", "Quiet_Orchard"]
