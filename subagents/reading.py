"""Extractive reading: verbatim sentences that best answer a set of terms.

Extractive subagents and the lead's direct answer cut their findings with
these; they are quotes by construction.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runtime.kb import KnowledgeBase
from runtime.text import stem, stems
from state.findings import Finding

MIN_SENTENCE_CHARS = 40
MAX_SENTENCE_CHARS = 600


@dataclass(frozen=True)
class Extract:
    """A sentence cut from a passage, with how well it matches the query terms.

    Attributes:
        passage_id: The passage.
        sentence: The sentence, verbatim.
        number: Its number in the passage (`runtime.sentences`), from 1.
        score: The query weight it carries.
        matched: That weight's share of the query's.
    """

    passage_id: str
    sentence: str
    number: int
    score: float
    matched: float


def idf_weights(kb: KnowledgeBase, words: Iterable[str]) -> dict[str, float]:
    """Inverse document frequency of each word over the passages."""
    freqs = kb.document_frequencies(words)
    return {w: math.log(1 + kb.size / (1 + n)) for w, n in freqs.items()}


def best_sentences(
    passages: Iterable[tuple[str, Sequence[str]]], weights: dict[str, float], n: int
) -> list[Extract]:
    """The `n` sentences that carry most query weight, at most one per passage.

    `passages` are (passage_id, its sentences) pairs, already chosen as
    relevant: a passage none of whose sentences carries query words still
    gives its first sentence of useful length, which states its topic. Ties go
    to the earlier passage.
    """
    stemmed = {stem(t): w for t, w in weights.items()}
    total = sum(stemmed.values()) or 1.0
    best: dict[str, Extract] = {}
    for passage_id, sentences in passages:
        for number, sentence in enumerate(sentences, 1):
            if not MIN_SENTENCE_CHARS <= len(sentence) <= MAX_SENTENCE_CHARS:
                continue
            words = stems(sentence)
            score = sum(w for t, w in stemmed.items() if t in words)
            current = best.get(passage_id)
            if current is None or score > current.score:
                best[passage_id] = Extract(
                    passage_id, sentence, number, score, score / total
                )
    return sorted(best.values(), key=lambda e: -e.score)[:n]


def quoted_findings(
    extracts: Iterable[Extract],
    kb: KnowledgeBase,
    *,
    facet_id: str,
    values: tuple[str, ...],
) -> list[Finding]:
    """Each extract as a finding that claims what it quotes, citing its passage."""
    findings = []
    for extract in extracts:
        passage = kb.passage(extract.passage_id)
        if passage is not None:
            findings.append(
                Finding(
                    claim=extract.sentence,
                    quote=extract.sentence,
                    source=passage.source(),
                    facet_ids=(facet_id,),
                    values=values,
                    confidence=round(extract.matched, 3),
                )
            )
    return findings
