"""Verify: the checks by code that a finding passes before it counts for coverage.

A finding stands when its quote is a verbatim span of the passage it cites, at
least `MIN_QUOTE_WORDS` words long; when its claim is supported by that quote
(most of the claim's content words, every number and every name in it appear
in the sentences that hold the quote, with the same negation; a name may also
be the passage's title); and only for the
values its evidence is about. Evidence is about a value when the quote, the
passage's title or its section names it (all of its content words appear there,
and its acronyms as written), or, for a category value that a passage rarely
names ("tropical cyclones" for a hurricane), when the first sentence of the
cited document names it: an article's lead sentence says what kind of thing its
subject is. For a question of a period, evidence counts only of that period: a
year of it is named by the quote's sentences, the passage's title or section,
or its document's opening paragraph (a generic value, "Storms", is otherwise
covered by a storm of any year). A value that is the cited document's own title
is exempt: the plan chose that document, and whether it belongs to the period
was the plan's to judge. A verified finding's quote is the whole
sentences that hold it; a claim that passes but says a word its evidence does
not ("a loss" for "a profit", "Microsoft" opening a sentence about Google) is
replaced by them: what a verified finding asserts is its evidence's own words.
No model can talk its way past these checks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from runtime.kb import Passage, opening
from runtime.sources import PassageLookup
from runtime.text import (
    WORD,
    names,
    negations,
    numbers,
    proper_names,
    sentence_spans,
    sentences,
    stems,
    years,
)
from state.findings import (
    MIN_QUOTE_WORDS,
    Finding,
    long_enough_to_quote,
    normalize_text,
)
from state.plan import normalize

CLAIM_SUPPORT = 0.6
"""Share of a claim's content words that its quote's sentences must hold."""
UNKNOWN_PASSAGE = "cites an unknown passage"
SHORT_QUOTE = f"quote shorter than {MIN_QUOTE_WORDS} words"
NOT_VERBATIM = "quote not verbatim in its passage"
UNSUPPORTED = "claim not supported by its quote"
OFF_VALUE = "evidence not about its values"
OFF_PERIOD = "evidence not of the question's period"


@dataclass(frozen=True)
class Verdict:
    """A verified finding, its values cut to those its evidence is about; or why not."""

    finding: Finding | None
    reason: str | None = None


def opening_passage_id(doc_id: str) -> str:
    """The id of a document's first passage: its lead, which says what it is about."""
    return f"{doc_id}#0"


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """Where `quote` stands in `text`, case and whitespace aside; None if nowhere."""
    folded: list[str] = []
    where: list[int] = []
    for at, char in enumerate(text):
        if char.isspace():
            if folded and folded[-1] != " ":
                folded.append(" ")
                where.append(at)
            continue
        for piece in char.casefold():
            folded.append(piece)
            where.append(at)
    wanted = normalize_text(quote)
    found = "".join(folded).find(wanted) if wanted else -1
    if found < 0:
        return None
    return where[found], where[found + len(wanted) - 1] + 1


def quote_sentences(quote: str, passage_text: str) -> str | None:
    """The whole sentences of the passage that hold the quote, or None.

    Sentences are the passage's own (`runtime.sentences`): a quote that keeps
    its full stop reaches no further than its last sentence.
    """
    span = locate(quote, passage_text)
    if span is None:
        return None
    start, end = span
    held = [(a, b) for a, b in sentence_spans(passage_text) if a < end and b > start]
    return passage_text[held[0][0] : held[-1][1]] if held else None


def supports(claim: str, evidence: str, subject: str = "") -> bool:
    """Whether `evidence` backs `claim`.

    It must hold most of the claim's content words, every number in it, every
    name it writes (`proper_names`; `subject`, what the evidence is about,
    may hold a name too), and the same negations: "no profit" is not backed by
    "a profit", nor "Kashmir" by a sentence about Pakistan.
    """
    wanted = stems(claim)
    if not wanted or not numbers(claim) <= numbers(evidence):
        return False
    written = {w.casefold() for w in WORD.findall(f"{evidence} {subject}")}
    if not proper_names(claim) <= written:
        return False
    if bool(negations(claim)) != bool(negations(evidence)):
        return False
    return len(wanted & stems(evidence)) >= CLAIM_SUPPORT * len(wanted)


def restates(claim: str, evidence: str, subject: str = "") -> bool:
    """Whether every content word of `claim` is in `evidence` or its `subject`."""
    return stems(claim) <= stems(f"{evidence} {subject}")


def lead_sentence(text: str) -> str:
    """The first sentence of a passage: in an article's lead, what its subject is."""
    first = sentences(text)
    return first[0] if first else ""


def of_period(
    sentences: str, passage: Passage, lead: Passage | None, period: AbstractSet[str]
) -> bool:
    """Whether evidence is of the question's `period` (any evidence, for none)."""
    if not period:
        return True
    said = f"{sentences} {passage.title} {passage.section}"
    return bool(period & years(f"{said} {opening(lead.text) if lead else ''}"))


def check(
    finding: Finding,
    passage: Passage | None,
    lead: Passage | None,
    period: AbstractSet[str] = frozenset(),
) -> Verdict:
    """Apply every check to one finding, given its passage and its document's lead."""
    if passage is None:
        return Verdict(None, UNKNOWN_PASSAGE)
    if not long_enough_to_quote(finding.quote):
        return Verdict(None, SHORT_QUOTE)
    sentences = quote_sentences(finding.quote, passage.text)
    if sentences is None:
        return Verdict(None, NOT_VERBATIM)
    if not supports(finding.claim, sentences, passage.title):
        return Verdict(None, UNSUPPORTED)
    direct = f"{finding.quote} {passage.title} {passage.section}"
    first = lead_sentence(lead.text) if lead is not None else ""
    about = tuple(v for v in finding.values if names(v, direct) or names(v, first))
    if finding.values and not about:
        return Verdict(None, OFF_VALUE)
    if not of_period(sentences, passage, lead, period):
        about = tuple(v for v in about if normalize(v) == normalize(passage.title))
        if not about:
            return Verdict(None, OFF_PERIOD)
    claim = finding.claim if restates(finding.claim, sentences, passage.title) else ""
    return Verdict(
        finding.model_copy(
            update={
                "quote": sentences,
                "claim": claim or sentences,
                "values": about,
                "verified": True,
            }
        )
    )


def verify_findings(
    findings: Sequence[Finding],
    sources: PassageLookup,
    period: AbstractSet[str] = frozenset(),
) -> tuple[list[Finding], Counter[str]]:
    """The findings that pass every check, and how many were dropped for each reason.

    `period` is the years the question names, if any.
    """
    wanted: Iterable[str] = [
        pid
        for f in findings
        for pid in (f.source.passage_id, opening_passage_id(f.source.doc_id))
    ]
    passages = sources.passages(wanted)
    kept: list[Finding] = []
    dropped: Counter[str] = Counter()
    for finding in findings:
        verdict = check(
            finding,
            passages.get(finding.source.passage_id),
            passages.get(opening_passage_id(finding.source.doc_id)),
            period,
        )
        if verdict.finding is None:
            dropped[verdict.reason or UNKNOWN_PASSAGE] += 1
        else:
            kept.append(verdict.finding)
    return kept, dropped


def one_per_quote(findings: Sequence[Finding]) -> list[Finding]:
    """The findings with one per piece of evidence, across passages and tasks.

    A verified quote is whole sentences (`check`). Findings that quote the
    same words (in two passages, or from two tasks) are one, and so is a
    finding whose quote lies within another's of the same passage (a sentence
    pointed at alone and with the next). The longest quote stands for its
    group, with the facets and values of each, in the place of the group's
    first finding.
    """
    keys = [(f.source.passage_id, f" {normalize_text(f.quote)} ") for f in findings]

    def holds(j: int, i: int) -> bool:
        (passage_j, quote_j), (passage_i, quote_i) = keys[j], keys[i]
        return quote_i == quote_j or (passage_i == passage_j and quote_i in quote_j)

    standing: list[int] = []
    group: dict[int, int] = {}
    for i in sorted(range(len(findings)), key=lambda i: -len(keys[i][1])):
        group[i] = next((j for j in standing if holds(j, i)), i)
        if group[i] == i:
            standing.append(i)
    merged: dict[int, Finding] = {}
    for i, finding in enumerate(findings):
        j = group[i]
        seen = merged.setdefault(j, findings[j])
        if i != j:
            merged[j] = seen.model_copy(
                update={
                    "facet_ids": tuple(
                        dict.fromkeys(seen.facet_ids + finding.facet_ids)
                    ),
                    "values": tuple(dict.fromkeys(seen.values + finding.values)),
                }
            )
    return list(merged.values())
