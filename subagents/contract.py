"""The subagent contract: the brief it is given, the answer it owes, the checks.

Whatever produced an answer, only findings that pass `check_answer` leave the
subagent; an answer that never validates, or whose every finding is refused,
fails the task.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints

from runtime.reliability import describe
from runtime.sources import PassageLookup
from runtime.structured import ModelOutputError, json_schema
from runtime.text import names
from state.findings import Finding
from state.plan import named_item
from state.tasks import TaskDefinition, TaskResult
from subagents.evidence import (
    MAX_QUOTE_SENTENCES,
    Ledger,
    handle,
    passage_of,
    pointed_quote,
    runs,
)

FINISH_PROMPT = (
    "Stop searching now. Report what you found as one JSON object: each finding "
    "names the evidence handle (E1, E2, ...) and the numbers of its sentences "
    "that show it."
)
"""What a subagent is told when it must stop searching and answer."""


class ClaimedFinding(BaseModel):
    """One finding: the evidence it points at, and what that evidence shows.

    A finding points: an evidence handle and the numbers of its sentences
    that show the claim; code copies those sentences as the quote. A literal
    `quote` and `passage_id` are accepted too, and checked the same way.
    """

    evidence: str = Field(
        default="", max_length=40, description="The evidence handle: E1, E2, ..."
    )
    sentences: list[int] = Field(
        default_factory=list,
        max_length=MAX_QUOTE_SENTENCES,
        description="The numbers of the sentences of that evidence that show it.",
    )
    claim: str = Field(
        default="",
        max_length=300,
        description="Optional: one sentence saying what they show. Left out, the "
        "finding claims what its sentences say.",
    )
    values: list[int | Annotated[str, StringConstraints(max_length=80)]] = Field(
        default_factory=list,
        max_length=4,
        description="The numbers of the values to cover that it is about.",
    )
    quote: str = Field(
        default="", max_length=400, description="Instead of sentences: exact words."
    )
    passage_id: str = Field(
        default="", max_length=120, description="Instead of evidence: a passage id."
    )
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)


UNKNOWN_PASSAGE = "unknown passage"
UNKNOWN_EVIDENCE = "unknown evidence handle"
BAD_SENTENCES = "bad sentence numbers"
NO_EVIDENCE = "finding points at no evidence"
NO_TASK_VALUE = "finding names none of the task's values"
REFUSALS = (
    UNKNOWN_PASSAGE,
    UNKNOWN_EVIDENCE,
    BAD_SENTENCES,
    NO_EVIDENCE,
    NO_TASK_VALUE,
)
"""Why a claimed finding is refused before verification: each error starts so."""


def refusal_reason(error: str) -> str | None:
    """The refusal an error of a subagent's answer names, None for other errors."""
    return next((r for r in REFUSALS if error.startswith(r)), None)


def refused_by_reason(results: Iterable[TaskResult]) -> dict[str, int]:
    """How many claimed findings the tasks' answer checks refused, by why."""
    reasons = (refusal_reason(e) for r in results for e in r.errors)
    return dict(Counter(r for r in reasons if r is not None))


MAX_FINDINGS = 6
"""Most findings one answer holds: the schema bounds what a model may write."""


class SubagentAnswer(BaseModel):
    """Your findings."""

    findings: list[ClaimedFinding] = Field(
        default_factory=list, max_length=MAX_FINDINGS
    )


ANSWER_GUIDE = (
    "Search first. Then answer with only one JSON object, "
    '{"findings": [{"evidence": "E2", "sentences": [3], "values": [1]}]}: each '
    "finding points at evidence you were shown, its handle and the numbers of "
    "the sentences that show it, and the numbers of the values it is about. The "
    'quote is copied from those sentences for you; a "claim" of your own is '
    "optional."
)


def pointing_schema(
    schema: type[BaseModel], evidence: Ledger, values: int
) -> dict[str, Any]:
    """`schema`'s JSON schema, its findings able only to point at evidence shown.

    A server that enforces it lets a finding name only a handle of the
    ledger, each with the numbers of its sentences shown, and, for a task of
    several values, requires their numbers; with no evidence yet, it allows
    no finding at all. It asks for no claim and no confidence (a float a
    constrained model can spin out to its length limit): a finding whose
    output is constrained only points, and claims what its sentences say.
    """
    enforced = json_schema(schema)
    shown = enforced["properties"]
    pointable = [(handle(n), s) for n, s in enumerate(evidence.values()) if s]
    if not pointable:
        shown["findings"] = {"type": "array", "maxItems": 0}
        return enforced
    fields = enforced["$defs"][ClaimedFinding.__name__]["properties"]
    kept: dict[str, Any] = {}
    required = ["evidence", "sentences"]
    if values > 1:
        numbers = {"type": "integer", "enum": list(range(1, values + 1))}
        kept["values"] = fields["values"] | {"items": numbers, "minItems": 1}
        required.append("values")
    pointers = [
        {
            "type": "object",
            "description": f"A finding that points at {name}.",
            "properties": {
                "evidence": {"type": "string", "enum": [name]},
                "sentences": fields["sentences"]
                | {"items": {"type": "integer", "enum": numbers}, "minItems": 1},
                **kept,
            },
            "required": required,
        }
        for name, numbers in pointable
    ]
    enforced["$defs"] = enforced["$defs"] | {
        ClaimedFinding.__name__: {"anyOf": pointers}
    }
    if "evidence" in shown:  # a step that may read evidence shown
        handles = [name for name, _ in pointable]
        shown["evidence"] = shown["evidence"] | {"enum": ["", *handles]}
    return enforced


MAX_CITED_IN_BRIEF = 12
"""Cited sources a brief names; searches leave out every cited passage anyway."""


def brief(task: TaskDefinition) -> str:
    """The one message a subagent starts from.

    A re-delegated task also says what the run already cites and what earlier
    attempts at its values found or why they failed.
    """
    if len(task.values) == 1:
        values = f"Value to cover: {task.values[0]}"
    else:
        numbered = "\n".join(f"{n}. {v}" for n, v in enumerate(task.values, 1))
        values = f"Values to cover (name them by number):\n{numbered}"
    parts = [
        f"Question: {task.question}",
        f"Your facet: {task.brief}",
        values,
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
    parts.append(ANSWER_GUIDE)
    return "\n\n".join(parts)


def to_finding(
    claimed: ClaimedFinding,
    task: TaskDefinition,
    evidence: Ledger,
    sources: PassageLookup,
) -> Finding | str:
    """Resolve a claimed finding against the task, its evidence ledger and sources.

    A pointer (handle and sentence numbers shown) becomes the passage and its
    exact words; a literal quote is kept as written, for verification to
    check. Its values are those it names and its evidence names
    (`task_values`). Returns the typed finding, or why it was refused.
    """
    if claimed.evidence:
        passage_id = passage_of(claimed.evidence, evidence)
        if passage_id is None:
            return f"{UNKNOWN_EVIDENCE} {claimed.evidence!r}"
    elif claimed.passage_id:
        passage_id = passage_of(claimed.passage_id, evidence) or claimed.passage_id
    else:
        return NO_EVIDENCE
    passage = sources.passage(passage_id)
    if passage is None:
        return f"{UNKNOWN_PASSAGE} {passage_id!r}"
    quote = claimed.quote
    if claimed.sentences or not quote:
        try:
            shown = evidence.get(passage_id, [])
            quote = pointed_quote(passage.text, claimed.sentences, shown)
        except ValueError as bad:
            return f"{BAD_SENTENCES} of {claimed.evidence or passage_id}: {bad}"
    values = task_values(
        claimed.values, task, f"{quote} {passage.title} {passage.section}"
    )
    if not values:
        return f"{NO_TASK_VALUE}: {claimed.values}"
    return Finding(
        claim=claimed.claim or quote,
        quote=quote,
        source=passage.source(),
        facet_ids=(task.facet_id,),
        values=values,
        confidence=claimed.confidence,
    )


def task_values(
    named: Sequence[int | str], task: TaskDefinition, evidence: str
) -> tuple[str, ...]:
    """The task's values a finding is about: those it names and its `evidence` names.

    A finding names values by number or as spelled in the brief; the task's
    values its evidence (quote, title and section) names are code's to read,
    whatever number a model chose. A task of one value is what its every
    finding is about. Verification still keeps a value only where the
    evidence is about it.
    """
    if len(task.values) == 1:
        return task.values
    chosen = [named_item(n, task.values) for n in named]
    read = [v for v in task.values if names(v, evidence)]
    return tuple(dict.fromkeys(v for v in [*chosen, *read] if v is not None))


def check_answer(
    answer: SubagentAnswer,
    task: TaskDefinition,
    evidence: Ledger,
    sources: PassageLookup,
) -> tuple[list[Finding], list[str]]:
    """The findings of an answer that pass `to_finding`, and why the others did not."""
    findings: list[Finding] = []
    errors: list[str] = []
    for claimed in answer.findings:
        for piece in pieces(claimed):
            checked = to_finding(piece, task, evidence, sources)
            if isinstance(checked, str):
                errors.append(checked)
            else:
                findings.append(checked)
    return findings, errors


def pieces(claimed: ClaimedFinding) -> list[ClaimedFinding]:
    """A finding pointing at sentences with gaps between them, as one per run.

    A quote is sentences one after another; a model that points at [2, 5]
    chose two quotes, and code transcribes both. Each piece keeps the claim
    (or, without one, is its own quote) and is checked on its own.
    """
    if not claimed.sentences:
        return [claimed]
    return [
        claimed.model_copy(update={"sentences": run}) for run in runs(claimed.sentences)
    ]


def answer_output(
    answer: SubagentAnswer,
    task: TaskDefinition,
    evidence: Ledger,
    sources: PassageLookup,
    *,
    steps: int,
    note: str | None = None,
) -> dict[str, object]:
    """A subagent's output from its answer: the findings that pass the checks.

    An answer whose every finding is refused (invented passages, values not
    asked for) failed: its output never held one valid finding. A `note` (why
    it finished early) is kept with the errors.
    """
    findings, errors = check_answer(answer, task, evidence, sources)
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
