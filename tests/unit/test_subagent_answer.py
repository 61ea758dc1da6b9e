"""A subagent's claimed findings, resolved against its task, ledger and corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from roles.verify import verify_findings
from runtime.kb import KnowledgeBase, ingest
from state.tasks import TaskDefinition
from subagents.contract import (
    BAD_SENTENCES,
    NO_EVIDENCE,
    UNKNOWN_EVIDENCE,
    ClaimedFinding,
    SubagentAnswer,
    check_answer,
    pointing_schema,
    refusal_reason,
    task_values,
    to_finding,
)
from subagents.evidence import passage_of, pointed_quote

TASK = TaskDefinition(
    task_id="t",
    run_id="r",
    agent_id="researcher",
    facet_id="f1",
    question="q",
    brief="AI in music and film",
    values=("music", "film"),
    acceptance="a quoted finding per value",
)
LEDGER = {"AI_in_film#0": [1], "AI_in_music#0": [1, 2]}
"""E1 is the film passage (its first sentence shown), E2 the music passage."""
COMPOSE = (
    "Music generators compose full songs, including vocals, from a text description."
)
SUED = (
    "Record labels sued music generator companies over training on copyrighted "
    "recordings."
)


def report(passage_id: str, *values: str) -> ClaimedFinding:
    return ClaimedFinding(
        claim="c", quote="q", passage_id=passage_id, values=list(values)
    )


def test_values_match_whatever_their_case_and_spacing(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    claimed = report("AI_in_music#0", " Music", "FILM ", "music")
    finding = to_finding(claimed, TASK, {}, kb)
    assert not isinstance(finding, str)
    assert finding.values == ("music", "film")
    assert finding.facet_ids == ("f1",)
    assert finding.source.title == "AI in music"


def test_unknown_passage_and_foreign_values_are_refused(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    assert to_finding(report("AI_in_music#99", "music"), TASK, {}, kb) == (
        "unknown passage 'AI_in_music#99'"
    )
    refused = to_finding(report("AI_in_writing#0", "painting"), TASK, {}, kb)
    assert isinstance(refused, str) and "none of the task's values" in refused


def test_the_values_its_evidence_names_count_whatever_number_was_chosen(
    creative_kb: str,
) -> None:
    # Pointing at the film passage, a model named value 1 (music): the
    # evidence names film, and verification keeps only what it is about.
    kb = KnowledgeBase(creative_kb)
    claimed = ClaimedFinding(evidence="E1", sentences=[1], values=[1])
    finding = to_finding(claimed, TASK, LEDGER, kb)
    assert not isinstance(finding, str)
    assert finding.values == ("music", "film")
    (kept,), _ = verify_findings([finding], kb)
    assert kept.values == ("film",)


def test_single_value_task_owns_its_findings_however_they_name_it(
    creative_kb: str,
) -> None:
    kb = KnowledgeBase(creative_kb)
    single = TASK.model_copy(update={"values": ("music",)})
    for named in ((), ("The music industry",)):
        finding = to_finding(report("AI_in_music#0", *named), single, {}, kb)
        assert not isinstance(finding, str) and finding.values == ("music",)


def test_a_pointer_becomes_the_exact_sentences_and_values_by_number(
    creative_kb: str,
) -> None:
    kb = KnowledgeBase(creative_kb)
    claimed = ClaimedFinding(evidence="E2", sentences=[2, 1], values=[1, 7])
    finding = to_finding(claimed, TASK, LEDGER, kb)
    assert not isinstance(finding, str)
    assert finding.source.passage_id == "AI_in_music#0"
    assert finding.quote == f"{COMPOSE} {SUED}"
    assert finding.claim == finding.quote  # no claim given: it claims its quote
    assert finding.values == ("music",)  # 7 is no value of the task


def test_a_claim_given_with_a_pointer_is_kept(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    claimed = ClaimedFinding(
        evidence="e2", sentences=[2], claim="Labels sued music generator companies."
    )
    finding = to_finding(
        claimed, TASK.model_copy(update={"values": ("x",)}), LEDGER, kb
    )
    assert not isinstance(finding, str)
    assert finding.quote == SUED and finding.claim.startswith("Labels sued")


@pytest.mark.parametrize(
    ("pointer", "reason"),
    [
        ({"evidence": "E3", "sentences": [1]}, UNKNOWN_EVIDENCE),
        ({"evidence": "AI_in_writing#0", "sentences": [1]}, UNKNOWN_EVIDENCE),
        ({"evidence": "E2", "sentences": [9]}, BAD_SENTENCES),
        ({"evidence": "E2", "sentences": [0]}, BAD_SENTENCES),
        ({"evidence": "E1", "sentences": [2]}, BAD_SENTENCES),  # never shown
        ({"evidence": "E2"}, BAD_SENTENCES),
        ({}, NO_EVIDENCE),
    ],
)
def test_a_pointer_at_nothing_shown_is_refused_and_counted(
    creative_kb: str, pointer: dict[str, Any], reason: str
) -> None:
    kb = KnowledgeBase(creative_kb)
    claimed = ClaimedFinding.model_validate({**pointer, "values": [1]})
    refused = to_finding(claimed, TASK, LEDGER, kb)
    assert isinstance(refused, str) and refusal_reason(refused) == reason


def test_a_quote_is_up_to_three_sentences_in_a_row_that_were_shown() -> None:
    text = "One is here. Two is here. Three is here. Four is here."
    every = [1, 2, 3, 4]
    assert pointed_quote(text, [3, 2], every) == "Two is here. Three is here."
    with pytest.raises(ValueError, match="more than 3"):
        pointed_quote(text, every, every)
    with pytest.raises(ValueError, match="one after another"):
        pointed_quote(text, [1, 3], every)
    with pytest.raises(ValueError, match="sentence 2 was not shown"):
        pointed_quote(text, [2], [1, 3])


def test_handles_name_only_what_the_ledger_holds() -> None:
    assert passage_of("E1", LEDGER) == "AI_in_film#0"
    assert passage_of("[E2]", LEDGER) == "AI_in_music#0"
    assert passage_of("AI_in_music#0", LEDGER) == "AI_in_music#0"
    assert passage_of("E0", LEDGER) is None
    assert passage_of("AI_in_writing#0", LEDGER) is None


def test_the_enforced_schema_allows_only_what_was_shown() -> None:
    shown = {"a#0": [1, 2], "b#0": [], "c#0": [4, 5]}
    schema = pointing_schema(SubagentAnswer, shown, values=2)
    e1, e3 = schema["$defs"]["ClaimedFinding"]["anyOf"]  # nothing of E2 shown
    assert e1["properties"]["evidence"]["enum"] == ["E1"]
    assert e1["properties"]["sentences"]["items"]["enum"] == [1, 2]
    assert e3["properties"]["evidence"]["enum"] == ["E3"]
    assert e3["properties"]["sentences"]["items"]["enum"] == [4, 5]
    assert e1["properties"]["values"]["items"]["enum"] == [1, 2]
    assert set(e1["required"]) == {"evidence", "sentences", "values"}
    assert not {"quote", "claim"} & set(e1["properties"])  # it only points
    nothing_shown = pointing_schema(SubagentAnswer, {}, values=1)
    assert nothing_shown["properties"]["findings"]["maxItems"] == 0
    (one,) = pointing_schema(SubagentAnswer, {"a#0": [3]}, values=1)["$defs"][
        "ClaimedFinding"
    ]["anyOf"]
    assert "values" not in one["properties"] and "values" not in one["required"]


def test_a_year_is_no_value_number() -> None:
    years = TASK.model_copy(update={"values": ("2008", "2009")})
    assert task_values(["2009", 1, 2009], years, "") == ("2009", "2008")


def test_sentences_with_gaps_are_one_finding_per_run(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "Storms.md").write_text(
        "# Storms\n\n## Damage\n\nStorm Eunice cut power to many homes in England. "
        "It was windy. Storm Ciaran flooded towns along the coast of France. "
        "Storm Otto brought snow to the north of Scotland in February.\n"
    )
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [tmp_path / "docs"])
    kb = KnowledgeBase(str(kb_path))
    passage = kb.passage("Storms#0")
    assert passage is not None
    every = list(range(1, 5))
    storms = TASK.model_copy(update={"values": ("storms",)})
    answer = SubagentAnswer.model_validate(
        {"findings": [{"evidence": "E1", "sentences": [1, 3, 4]}]}
    )
    ledger = {passage.passage_id: every}
    findings, refused = check_answer(answer, storms, ledger, kb)
    assert refused == []
    expected = [pointed_quote(passage.text, run, every) for run in ([1], [3, 4])]
    assert [f.quote for f in findings] == expected
    assert [f.claim for f in findings] == expected
