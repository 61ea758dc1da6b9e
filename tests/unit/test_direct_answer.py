"""A question one lookup answers is not delegated."""

from __future__ import annotations

from pathlib import Path

import pytest

from roles.direct_answer import answer_directly
from roles.plan import NothingMatchesError
from state.plan import CoveragePlan
from tests.support import extractive, research
from tests.unit.test_regions import kb_of


def test_single_fact_question_is_answered_directly(freshwiki_kb: str) -> None:
    state = research("When did Christian Atsu die?", extractive(freshwiki_kb))
    assert state["plan"].direct_answer
    assert [r.agent_id for r in state["results"].values()] == ["lead"]
    assert not [e for e in state["events"] if e.kind == "DELEGATE"]
    assert state["findings"] and all(f.verified for f in state["findings"])
    assert {f.source.title for f in state["findings"]} == {"Christian Atsu"}
    assert "[1]" in state["report"].markdown
    assert "## Answer" in state["report"].markdown
    assert "## Coverage" not in state["report"].markdown  # the question is no value


def test_broad_question_on_one_subject_is_split_by_section(freshwiki_kb: str) -> None:
    question = "Write a complete briefing on OceanGate and its submersibles."
    plan = research(question, extractive(freshwiki_kb, max_rounds=0))["plan"]
    assert not plan.direct_answer
    assert len(plan.facets) > 1
    assert all(v.startswith("OceanGate: ") for v in plan.dimensions[0].values)


@pytest.mark.parametrize(
    "question",
    [
        "Quetzalcoatlus wingspan?",
        "¿Cuáles fueron los desastres naturales más graves de 2022?",
        "Zorbulon festival of glimmerfish in 2022",
        "Which films and albums did Zorbulon release in 2022?",  # a name it lacks
        "Was ist der Klimawandel?",
    ],
)
def test_a_question_the_knowledge_base_cannot_answer_says_so(
    question: str, freshwiki_kb: str
) -> None:
    with pytest.raises(NothingMatchesError, match="nothing in the knowledge base"):
        research(question, extractive(freshwiki_kb))


def test_a_direct_answer_quotes_only_documents_of_the_question_s_period_and_place(
    tmp_path: Path,
) -> None:
    kb = kb_of(
        tmp_path,
        {
            "Ohio Flood": "The Ohio Flood struck Ohio, United States, in 2023. Heavy "
            "rain flooded homes and people lost power for days.",
            "Burma Storm": "The Burma Storm struck Myanmar in 2023. Heavy rain "
            "flooded homes and people lost power and homes for days.",
            "Old Ohio Flood": "The Old Ohio Flood struck Ohio, United States, in "
            "1937. Heavy rain flooded homes and people lost power for weeks.",
        },
    )
    question = "How did heavy rain affect people in the United States in 2023?"
    result = answer_directly(kb, CoveragePlan.direct(question), "run", 60.0)
    assert result.findings
    assert {f.source.title for f in result.findings} == {"Ohio Flood"}
