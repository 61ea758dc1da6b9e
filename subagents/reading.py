"""Extractive reading: verbatim sentences that best answer a set of terms.

Extractive subagents and the lead's direct answer cut their findings with
these; they are quotes by construction.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from runtime.kb import KnowledgeBase, stem, stems
from state.findings import Finding

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“'(\[]?[A-Z0-9])|\n+")
MIN_SENTENCE_CHARS = 40
MAX_SENTENCE_CHARS = 600


@dataclass(frozen=True)
class Extract:
    """A sentence cut from a passage, with how well it matches the query terms."""

    passage_id: str
    sentence: str
    score: float
    matched: float


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, each verbatim, of useful length."""
    return [
        s.strip()
        for s in _SENTENCE_END.split(text)
        if MIN_SENTENCE_CHARS <= len(s.strip()) <= MAX_SENTENCE_CHARS
    ]


def idf_weights(kb: KnowledgeBase, words: Iterable[str]) -> dict[str, float]:
    """Inverse document frequency of each word over the passages."""
    freqs = kb.document_frequencies(words)
    return {w: math.log(1 + kb.size / (1 + n)) for w, n in freqs.items()}


def best_sentences(
    passages: Iterable[tuple[str, str]], weights: dict[str, float], n: int
) -> list[Extract]:
    """The `n` sentences that carry most query weight, at most one per passage.

    `passages` are (passage_id, text) pairs, already chosen as relevant: a
    passage none of whose sentences carries query words still gives its first
    sentence, which states its topic. Ties go to the earlier passage.
    """
    stemmed = {stem(t): w for t, w in weights.items()}
    total = sum(stemmed.values()) or 1.0
    best: dict[str, Extract] = {}
    for passage_id, text in passages:
        for sentence in split_sentences(text):
            words = stems(sentence)
            score = sum(w for t, w in stemmed.items() if t in words)
            current = best.get(passage_id)
            if current is None or score > current.score:
                best[passage_id] = Extract(passage_id, sentence, score, score / total)
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
