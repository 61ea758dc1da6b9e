"""The subagent contract: the brief it is given, the answer it owes, the checks.

Whatever produced an answer, only findings that pass `check_answer` leave the
subagent; an answer that never validates, or whose every finding is refused,
fails the task.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

from runtime.kb import KnowledgeBase
from runtime.reliability import describe
from runtime.structured import ModelOutputError, schema_instructions
from state.findings import Finding, normalize_text
from state.tasks import TaskDefinition


class ClaimedFinding(BaseModel):
    """One finding: a claim and the words of a passage that show it."""

    claim: str = Field(
        max_length=300, description="One sentence: what the quote shows."
    )
    quote: str = Field(
        max_length=400, description="Words copied exactly from the passage."
    )
    passage_id: str = Field(
        max_length=120, description="The passage_id of the passage quoted."
    )
    values: list[Annotated[str, StringConstraints(max_length=80)]] = Field(
        default_factory=list,
        max_length=4,
        description="The values to cover that the finding is about.",
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


UNKNOWN_PASSAGE = "unknown passage"
NO_TASK_VALUE = "finding names none of the task's values"
REFUSALS = (UNKNOWN_PASSAGE, NO_TASK_VALUE)
"""Why a claimed finding is refused before verification: each error starts so."""


def refusal_reason(error: str) -> str | None:
    """The refusal an error of a subagent's answer names, None for other errors."""
    return next((r for r in REFUSALS if error.startswith(r)), None)


MAX_FINDINGS = 6
"""Most findings one answer holds: the schema bounds what a model may write."""


class SubagentAnswer(BaseModel):
    """Your findings."""

    findings: list[ClaimedFinding] = Field(
        default_factory=list, max_length=MAX_FINDINGS
    )


MAX_CITED_IN_BRIEF = 12
"""Cited sources a brief names; searches leave out every cited passage anyway."""


def brief(task: TaskDefinition) -> str:
    """The one message a subagent starts from.

    A re-delegated task also says what the run already cites and what earlier
    attempts at its values found or why they failed.
    """
    values = "\n".join(f"- {v}" for v in task.values)
    parts = [
        f"Question: {task.question}",
        f"Your facet: {task.brief}",
        f"Values to cover:\n{values}",
        f"Done when: {task.acceptance}",
    ]
    if task.cited:
        shown = [f"- {s.title}, {s.section}" for s in task.cited[:MAX_CITED_IN_BRIEF]]
        more = len(task.cited) - len(shown)
        shown += [f"- and {more} more"] if more > 0 else []
        parts.append(
            "Already cited for this question (find something new; searches leave "
            "these passages out):\n" + "\n".join(shown)
        )
    if task.earlier:
        parts.append("Earlier attempts:\n" + "\n".join(f"- {e}" for e in task.earlier))
    parts.append(f"Return findings as JSON:\n{schema_instructions(SubagentAnswer)}")
    return "\n\n".join(parts)


def to_finding(
    claimed: ClaimedFinding, task: TaskDefinition, kb: KnowledgeBase
) -> Finding | str:
    """Check a claimed finding against the task and the knowledge base.

    Returns the typed finding, or the reason it was refused.
    """
    passage = kb.passage(claimed.passage_id)
    if passage is None:
        return f"{UNKNOWN_PASSAGE} {claimed.passage_id!r}"
    spelled = {normalize_text(v): v for v in task.values}
    named = (spelled.get(normalize_text(v)) for v in claimed.values)
    values = tuple(dict.fromkeys(v for v in named if v is not None))
    if not claimed.values and len(task.values) == 1:
        values = task.values
    if not values:
        return f"{NO_TASK_VALUE}: {claimed.values}"
    return Finding(
        claim=claimed.claim,
        quote=claimed.quote,
        source=passage.source(),
        facet_ids=(task.facet_id,),
        values=values,
        confidence=claimed.confidence,
    )


def check_answer(
    answer: SubagentAnswer, task: TaskDefinition, kb: KnowledgeBase
) -> tuple[list[Finding], list[str]]:
    """The findings of an answer that pass `to_finding`, and why the others did not."""
    findings: list[Finding] = []
    errors: list[str] = []
    for claimed in answer.findings:
        checked = to_finding(claimed, task, kb)
        if isinstance(checked, str):
            errors.append(checked)
        else:
            findings.append(checked)
    return findings, errors


def answer_output(
    answer: SubagentAnswer,
    task: TaskDefinition,
    kb: KnowledgeBase,
    *,
    steps: int,
    note: str | None = None,
) -> dict[str, object]:
    """A subagent's output from its answer: the findings that pass the checks.

    An answer whose every finding is refused (invented passages, values not
    asked for) failed: its output never held one valid finding. A `note` (why
    it finished early) is kept with the errors.
    """
    findings, errors = check_answer(answer, task, kb)
    output: dict[str, object] = {
        "findings": findings,
        "errors": [*errors, note] if note else errors,
        "steps": steps,
    }
    if answer.findings and not findings:
        output["failure"] = "invalid output"
    return output


def invalid_output(error: ModelOutputError, steps: int) -> dict[str, object]:
    """The output of a subagent whose answer never validated: a failed task."""
    return {
        "findings": [],
        "errors": [describe(error)],
        "steps": steps,
        "failure": "invalid output",
    }
