"""A subagent's claimed findings are checked against its task and the corpus."""

from __future__ import annotations

from runtime.kb import KnowledgeBase
from state.tasks import TaskDefinition
from subagents.contract import ClaimedFinding, to_finding

TASK = TaskDefinition(
    task_id="t",
    trace_id="r",
    agent_id="researcher",
    facet_id="f1",
    question="q",
    brief="AI in music and film",
    values=("music", "film"),
    acceptance="a quoted finding per value",
)


def report(passage_id: str, *values: str) -> ClaimedFinding:
    return ClaimedFinding(
        claim="c", quote="q", passage_id=passage_id, values=list(values)
    )


def test_values_match_whatever_their_case_and_spacing(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    finding = to_finding(report("AI_in_music#0", " Music", "FILM ", "music"), TASK, kb)
    assert not isinstance(finding, str)
    assert finding.values == ("music", "film")
    assert finding.facet_ids == ("f1",)
    assert finding.source.title == "AI in music"


def test_unknown_passage_and_foreign_values_are_refused(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    assert to_finding(report("AI_in_music#99", "music"), TASK, kb) == (
        "unknown passage 'AI_in_music#99'"
    )
    refused = to_finding(report("AI_in_music#0", "painting"), TASK, kb)
    assert isinstance(refused, str) and "none of the task's values" in refused


def test_single_value_task_owns_an_unlabelled_finding(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    single = TASK.model_copy(update={"values": ("music",)})
    finding = to_finding(report("AI_in_music#0"), single, kb)
    assert not isinstance(finding, str) and finding.values == ("music",)
