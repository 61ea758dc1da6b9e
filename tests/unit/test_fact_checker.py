"""The fact checker as verifier: it may refuse what code let by, never add."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from roles.fact_check import BATCH, REFUSED, FactChecker, finding_key
from runtime.context import Context
from runtime.kb import KnowledgeBase
from state.findings import Finding
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


def checked_on(
    lead: BaseChatModel,
    fake_models: Callable[[BaseChatModel], str],
    kb: str,
    agents: Path,
) -> Context:
    """A run whose verifier is the shipped fact checker on the lead's model."""
    shipped = load_registry()["fact_checker"]
    (agents / "fact_checker.md").write_text(
        "---\nname: fact_checker\ndescription: Checks.\ntools: [read]\n"
        f"routable: false\nmodel: lead\n---\n{shipped.system_prompt}\n"
    )
    return Context(
        lead_model=fake_models(lead),
        subagent_model=fake_models(FakeResearcher()),
        kb_path=kb,
        max_rounds=0,
        agents_dir=str(agents),
        verifier="fact_checker",
    )


def test_the_fact_checker_refuses_what_its_verdict_says_and_is_counted(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    lead = scripted(NARROW_PLAN, VERDICTS, NOTHING_MORE, "AI [1].")
    state = research(QUESTION, checked_on(lead, fake_models, creative_kb, tmp_path))
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


def test_a_verifier_that_fails_leaves_the_run_incomplete_and_says_why(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str, tmp_path: Path
) -> None:
    lead = scripted(NARROW_PLAN, "not json", "still not json", NOTHING_MORE, "AI [1].")
    state = research(QUESTION, checked_on(lead, fake_models, creative_kb, tmp_path))
    summary = state["report"].summary
    assert len(state["findings"]) == 3 and not state["dropped"]
    assert summary.incomplete is not None
    assert summary.incomplete.startswith("the fact check did not finish: fact_checker")
    assert "judged 0 of 3" in summary.incomplete
    # the calls that failed are counted too
    assert summary.tokens_by_role["verifier"] == 2 * USAGE["total_tokens"]


def test_a_verifier_that_fails_keeps_the_verdicts_it_gave(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    first = kb.search("music", 1)[0]
    findings = [
        Finding(
            claim=f"claim {n}",
            quote=first.text,
            source=first.source().model_copy(update={"passage_id": f"p{n}"}),
            facet_ids=("f0",),
            values=(),
        )
        for n in range(BATCH + 1)
    ]
    refusal = {"verdicts": [{"index": 0, "supported": False}]}
    model = scripted(refusal, "not json", "still not json")
    checker = FactChecker(load_registry()["fact_checker"], model, timeout_s=30)
    judged = asyncio.run(checker.judge(findings, kb))
    assert judged.verdicts == {finding_key(findings[0]): False}
    assert judged.failure is not None
    assert judged.usage.tokens == 3 * USAGE["total_tokens"]
