"""Write, LLM mode: the lead's cited synthesis that opens the report.

Extractive mode has no synthesis: its report is the quoted findings alone.
The synthesis is checked sentence by sentence: markers that name no source are
removed and a sentence that cites no source is dropped. A sentence must be
supported by the findings it cites, by the same check a finding's claim passes
against its quote (`roles.verify.supports`); one they do not support is cited to
a finding that says all of it, or dropped. What the opening says, its sources
say. When no sentence the lead wrote stands, it is asked to choose instead:
the numbers of the evidence that best answers the question, whose findings
code writes out, cited (`chosen_opening`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from roles.verify import restates, supports
from runtime.models import lead_deadline
from runtime.reliability import describe, settle
from runtime.structured import (
    ModelOutputError,
    ainvoke_structured,
    call_model,
    json_schema,
    message_text,
    schema_instructions,
)
from runtime.text import cited_sentences, whole_sentences
from state.findings import Finding, normalize_text
from state.report import Citation
from state.usage import Usage

_CITATION = re.compile(r"\[(\d+)\]")
_INVALID = re.compile(r"\s*\[(\d+)\]")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,3}[.)])[ \t]+", re.MULTILINE)
_LEADING = r"[ \t]*\[\d+\]"
_LED_LINES = re.compile(rf"\n(?={_LEADING})")
_LEADING_MARKERS = re.compile(rf"^(?:{_LEADING})(?:[ \t]*\[\d+\])*(?=[ \t]*\S)")

SYNTHESIS_MAX_TOKENS = 1024
"""The longest synthesis. Four short paragraphs need far fewer tokens; a small
model that copies out its evidence line by line instead is stopped here, in
time (a 0.5B model on two cores writes about 11 tokens a second)."""
SYNTHESIS_PROMPT = """You write the opening of a research report from numbered
evidence only. In at most four short paragraphs, answer the question. Cite every
statement with the numbers of the evidence it rests on, like [2] or [1][4]; use
no knowledge beyond the evidence. If values listed as not covered matter to the
question, say plainly that the evidence does not cover them. Answer with the
Markdown text only, no heading."""
MAX_CHOSEN = 5
"""The most findings a chosen opening holds."""
MAX_SHOWN = 24
"""The most findings the lead reads to write the opening. Four short paragraphs
cite far fewer; a run of twenty values has a hundred findings, which a 0.5B
model on two cores does not read and answer within the lead's deadline."""
CHOOSING_PROMPT = f"""You choose how a research report opens. Below is numbered
evidence. Answer with the numbers of the evidence that best answers the
question: at most {MAX_CHOSEN}, the most telling first, each about a different
subject."""


CHOSEN_HEADER = "_Chosen by the lead from the findings, as no sentence it wrote stood:_"
"""The line above an opening of chosen findings."""
NOTHING_CHOSEN = "the lead chose no finding it was shown"
"""Why a report has no opening when the lead's choice named no evidence."""


class Chosen(BaseModel):
    """The evidence chosen to open the report, by number."""

    numbers: list[int] = Field(
        description="Numbers of the evidence that best answers the question, "
        "the most telling first."
    )


@dataclass(frozen=True)
class Cited:
    """What one citation number stands for: its findings' words, its source's title."""

    evidence: str
    subject: str


@dataclass(frozen=True)
class Checked:
    """The synthesis as checked (None when no sentence stood) and what was cut.

    `sentences_kept` stood; `sentences_dropped` cited no source or repeated a
    kept one; `sentences_unsupported` cited sources that do not back them, and
    no source says them; `sentences_recited` are cited to the sources that say
    them, in place of those they named. `findings_chosen` open the report in
    place of a synthesis of which nothing stood; `failure` says why nothing
    does though the lead was asked (its call failed, or it chose nothing).
    """

    text: str | None
    sentences_kept: int = 0
    citations_dropped: int = 0
    sentences_dropped: int = 0
    sentences_unsupported: int = 0
    sentences_recited: int = 0
    findings_chosen: int = 0
    failure: str | None = None

    def shown(self) -> str | None:
        """What the report shows: the text, or a line saying why there is none.

        Nothing when the lead was never asked (no model, or no finding).
        """
        if self.text is not None:
            return self.text
        cut = self.sentences_dropped + self.sentences_unsupported
        unsupported = (
            f"none of the {cut} sentence(s) the lead wrote cites a finding "
            "that supports it"
        )
        why = [unsupported] if cut else []
        why += [self.failure] if self.failure else []
        return f"_No summary: {'; '.join(why)}._" if why else None


@dataclass(frozen=True)
class Synthesis:
    """The checked synthesis and what it cost."""

    checked: Checked
    usage: Usage


def cited_evidence(
    findings: Sequence[Finding], citations: dict[str, Citation]
) -> dict[int, Cited]:
    """Each citation number's evidence: the claims and quotes of its findings."""
    words: dict[int, list[str]] = {}
    titles: dict[int, str] = {}
    for finding in findings:
        number = citations[finding.source.passage_id].number
        words.setdefault(number, []).extend((finding.claim, finding.quote))
        titles[number] = finding.source.title
    return {n: Cited(" ".join(said), titles[n]) for n, said in words.items()}


def check_citations(text: str, sources: dict[int, Cited]) -> Checked:
    """Keep the sentences that say something their cited sources support.

    A marker naming no source is removed with the space before it. A sentence
    left with no valid marker, or with no word besides its markers and list
    numbers ("1. [20]"), is dropped, and so is the repeat of a kept one. A
    sentence that the evidence of its markers, taken together, does not
    support is cited instead to the sources that each say all of it: a model
    that copies a line of evidence under the wrong number chose the line, and
    code cites it. With no such source it is dropped as unsupported.
    """
    markers = dropped = unsupported = recited = 0
    said_before: set[str] = set()
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        kept = []
        for sentence in written_sentences(paragraph):
            cited = [int(n) for n in _CITATION.findall(sentence)]
            markers += sum(n not in sources for n in cited)
            backing = [sources[n] for n in dict.fromkeys(cited) if n in sources]
            said = _INVALID.sub("", sentence).strip()
            key = normalize_text(said)
            if not backing or not any(c.isalpha() for c in said) or key in said_before:
                dropped += 1
                continue
            if supports(said, *_joined(backing)):
                kept.append(_INVALID.sub(lambda m: _keep_if(m, sources), sentence))
            elif saying := [n for n, c in sources.items() if says_all(said, c)]:
                kept.append(f"{said} {''.join(f'[{n}]' for n in saying)}")
                recited += 1
            else:
                unsupported += 1
                continue
            said_before.add(key)
        if kept:
            paragraphs.append(" ".join(s.strip() for s in kept))
    return Checked(
        "\n\n".join(paragraphs) or None,
        len(said_before),
        markers,
        dropped,
        unsupported,
        recited,
    )


def says_all(sentence: str, source: Cited) -> bool:
    """Whether `source` alone says every content word of `sentence`, and backs it."""
    return restates(sentence, source.evidence, source.subject) and supports(
        sentence, source.evidence, source.subject
    )


def _joined(backing: Sequence[Cited]) -> tuple[str, str]:
    """The evidence and the subjects of several sources, as one."""
    return " ".join(c.evidence for c in backing), " ".join(c.subject for c in backing)


def written_sentences(paragraph: str) -> list[str]:
    """The sentences of a paragraph, each with the markers that cite it.

    A writer puts "[2]" after a sentence (`runtime.text.cited_sentences`); one
    that copies the evidence's layout puts it first, at the start of a line
    ("[2] Storms hit Britain."): the sentences after it that name no source of
    their own cite it. Whatever a sentence cites, it stands only if that
    supports it, so a marker read as the wrong sentence's costs that sentence
    and admits nothing. A list's bullets and numbers are not part of a sentence.
    """
    found: list[str] = []
    for part in _LED_LINES.split(_LIST_ITEM.sub("", paragraph)):
        led = _LEADING_MARKERS.match(part)
        if led is None:
            found += cited_sentences(part)
            continue
        markers = " ".join(m.group() for m in _CITATION.finditer(led.group()))
        found += [
            s if _CITATION.search(s) else f"{s} {markers}"
            for s in cited_sentences(part[led.end() :])
        ]
    return found


def _keep_if(marker: re.Match[str], sources: dict[int, Cited]) -> str:
    return marker.group(0) if int(marker.group(1)) in sources else ""


@dataclass(frozen=True)
class Synthesizer:
    """The lead model writing from numbered, verified evidence."""

    model: BaseChatModel
    timeout_s: float
    max_tokens: int = SYNTHESIS_MAX_TOKENS

    async def synthesize(
        self,
        question: str,
        findings: Sequence[Finding],
        citations: dict[str, Citation],
        gaps: Sequence[str],
    ) -> Synthesis:
        """The cited synthesis, each call within the lead's deadline.

        The lead reads the findings `shown_findings` picks. When none of its
        sentences stands, the findings the lead chooses (`choose`,
        `chosen_opening`) open the report in its place; a choice that fails
        leaves the synthesis as it was checked.
        """
        shown = shown_findings(findings)
        evidence = "\n".join(
            evidence_line(citations[f.source.passage_id].number, f) for f in shown
        )
        missing = ", ".join(gaps) or "none"
        async with lead_deadline(self.timeout_s, "writing"):
            answer = await call_model(
                self.model.bind(max_tokens=self.max_tokens),
                [
                    SystemMessage(SYNTHESIS_PROMPT),
                    HumanMessage(
                        f"Question: {question}\n\nEvidence:\n{evidence}\n\n"
                        f"Not covered: {missing}"
                    ),
                ],
            )
        written = message_text(answer)
        if answer.response_metadata.get("finish_reason") == "length":
            written = whole_sentences(written)
        sources = cited_evidence(shown, citations)
        checked = check_citations(written, sources)
        usage = Usage.of(answer)
        if checked.text is None:
            choice = await settle(self.choose(question, evidence, set(sources)))
            if isinstance(choice, Exception):  # the choice costs only itself
                failed = f"choosing findings to open it failed ({describe(choice)})"
                return Synthesis(replace(checked, failure=failed), usage)
            chosen, used = choice
            usage += used
            if lines := chosen_opening(chosen, findings, citations):
                text = "\n\n".join([CHOSEN_HEADER, *lines])
                checked = replace(checked, text=text, findings_chosen=len(lines))
            else:
                checked = replace(checked, failure=NOTHING_CHOSEN)
        return Synthesis(checked, usage)

    async def choose(
        self, question: str, evidence: str, numbers: set[int]
    ) -> tuple[list[int], Usage]:
        """The evidence numbers the lead chose to open the report, as it gave them.

        The server holds the answer to the numbers shown where it enforces a
        schema; an answer that still does not fit chooses nothing.
        """
        async with lead_deadline(self.timeout_s, "choosing the opening"):
            try:
                chosen, usage = await ainvoke_structured(
                    self.model,
                    [
                        SystemMessage(
                            f"{CHOOSING_PROMPT}\n\n{schema_instructions(Chosen)}"
                        ),
                        HumanMessage(f"Question: {question}\n\nEvidence:\n{evidence}"),
                    ],
                    Chosen,
                    enforce=choosing_schema(numbers),
                )
            except ModelOutputError as err:
                return [], err.usage
        return chosen.numbers, usage


def choosing_schema(numbers: set[int]) -> dict[str, Any]:
    """`Chosen`'s JSON schema: one to MAX_CHOSEN numbers of the evidence shown."""
    schema = json_schema(Chosen)
    schema["properties"]["numbers"] |= {
        "items": {"type": "integer", "enum": sorted(numbers)},
        "minItems": 1,
        "maxItems": MAX_CHOSEN,
    }
    return schema


def chosen_opening(
    numbers: Sequence[int],
    findings: Sequence[Finding],
    citations: dict[str, Citation],
) -> list[str]:
    """The findings behind the chosen evidence numbers, written out and cited.

    Each number that names evidence gives the claim of its first finding,
    followed by its marker; a number named again, or one of a document already
    chosen, is passed over, and so is any beyond MAX_CHOSEN. Empty when no
    number names evidence. A claim is what verification found its quote
    supports, so the opening says only what its sources say.
    """
    first: dict[int, Finding] = {}
    for finding in findings:
        first.setdefault(citations[finding.source.passage_id].number, finding)
    lines: list[str] = []
    documents: set[str] = set()
    for number in dict.fromkeys(numbers):
        chosen = first.get(number)
        if chosen is None or chosen.source.doc_id in documents:
            continue
        documents.add(chosen.source.doc_id)
        lines.append(f"{chosen.claim.strip()} [{number}]")
        if len(lines) == MAX_CHOSEN:
            break
    return lines


def shown_findings(findings: Sequence[Finding]) -> list[Finding]:
    """The findings the lead reads, in their order: at most MAX_SHOWN.

    The first finding of each value comes before any value's second, so every
    covered value is read (the first MAX_SHOWN values, when there are more).
    """
    firsts: dict[str, int] = {}
    for at, finding in enumerate(findings):
        for value in finding.values:
            firsts.setdefault(value, at)
    first = list(dict.fromkeys(firsts.values()))
    taken = set(first)
    rest = [at for at in range(len(findings)) if at not in taken]
    return [findings[at] for at in sorted((first + rest)[:MAX_SHOWN])]


def evidence_line(number: int, finding: Finding) -> str:
    """A finding as the lead reads it: its claim, and its quote if that says more.

    A finding that only points claims its quoted sentences; repeating them
    would double what a small model must read, and it copies what it reads.
    """
    if finding.claim.strip() == finding.quote.strip():
        return f"[{number}] {finding.claim}"
    return f'[{number}] {finding.claim} (quote: "{finding.quote}")'


def synthesizer(
    model: BaseChatModel | None, timeout_s: float, max_tokens: int
) -> Synthesizer | None:
    """The lead's synthesizer, or None in extractive mode.

    It writes at most `max_tokens` (the lead's limit), and no more than
    SYNTHESIS_MAX_TOKENS.
    """
    if model is None:
        return None
    return Synthesizer(model, timeout_s, min(max_tokens, SYNTHESIS_MAX_TOKENS))
