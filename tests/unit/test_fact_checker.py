"""The fact checker as verifier: it may refuse what code let by, never add."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from roles.fact_check import REFUSED
from runtime.context import Context
from subagents.registry import load_registry
from tests.support import research
from tests.unit.fakes import USAGE, FakeResearcher, scripted
from tests.unit.test_creative_trap import NARROW_PLAN, NOTHING_MORE, QUESTION

VERDICTS = {
    "verdicts": [
        {"index": 0, "supported": False, "reason": "the claim adds a cause"},
        {"index": 1, "supported": True},
        {"index": 2, "supported": True},
    ]
}


def test_the_fact_checker_refuses_what_its_verdict_says_and_is_counted(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    # the shipped fact checker, run on the lead's model for this test
    shipped = load_registry()["fact_checker"]
    (tmp_path / "fact_checker.md").write_text(
        "---\nname: fact_checker\ndescription: Checks.\ntools: [read]\n"
        f"routable: false\nmodel: lead\n---\n{shipped.system_prompt}\n"
    )
    lead = scripted(NARROW_PLAN, VERDICTS, NOTHING_MORE, "AI [1].")
    context = Context(
        lead_model=fake_models(lead),
        subagent_model=fake_models(FakeResearcher()),
        kb_path=creative_kb,
        max_rounds=0,
        agents_dir=str(tmp_path),
        verifier="fact_checker",
    )
    state = research(QUESTION, context)
    assert state["dropped"] == {REFUSED: 1}
    assert len(state["findings"]) == 2
    assert sorted(state["fact_checks"].values()) == [False, True, True]
    assert state["report"].summary.tokens_by_role["verifier"] == USAGE["total_tokens"]


def test_without_a_model_the_checks_by_code_stand_alone(creative_kb: str) -> None:
    context = Context(
        lead_model="extractive",
        subagent_model="extractive",
        kb_path=creative_kb,
        max_rounds=0,
        verifier="fact_checker",
    )
    state = research("How is AI used in music, film and writing?", context)
    assert state["findings"] and REFUSED not in state["dropped"]
    assert state.get("fact_checks", {}) == {}
