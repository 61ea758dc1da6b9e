"""The corpus probe: find documents relevant to a question that no one named.

Pseudo-relevance feedback: the verified quotes of the answer so far tell which
words its documents share (words that recur across several of them,
weighted by rarity). A query of those words, interpolated with the question,
ranks the corpus again. A document is relevant when the question alone or the
interpolated query reaches it; relevant documents that no finding cites and no
plan value names are values the plan never named.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from runtime.kb import RELEVANT_SHARE, KnowledgeBase, Passage, terms

EXPANSION_TERMS = 10
_DEPTH = 100


@dataclass(frozen=True)
class ProbeResult:
    """Documents the probe proposes, best first, and the words it expanded with."""

    documents: tuple[Passage, ...]
    expansion: tuple[str, ...]


def expansion_terms(
    kb: KnowledgeBase, question: str, feedback: Iterable[tuple[str, str]], n: int
) -> list[str]:
    """Words that several feedback documents share, weighted by rarity.

    `feedback` holds (doc_id, text) pairs.
    """
    asked = set(terms(question))
    docs_with: dict[str, set[str]] = defaultdict(set)
    for doc_id, text in feedback:
        for word in terms(text):
            if word not in asked and len(word) > 2 and not word.isdigit():
                docs_with[word].add(doc_id)
    shared = [w for w, docs in docs_with.items() if len(docs) >= 2]
    freqs = kb.document_frequencies(shared)
    weight = {w: len(docs_with[w]) * math.log(kb.size / (1 + freqs[w])) for w in shared}
    return sorted(shared, key=lambda w: (-weight[w], w))[:n]


def probe(
    kb: KnowledgeBase,
    question: str,
    feedback: Iterable[tuple[str, str]],
    known: Iterable[str],
    names: Iterable[str],
) -> ProbeResult:
    """Documents relevant to `question` that are not `known` and no name covers.

    `known` are doc ids already cited; `names` are plan values: a document
    whose title holds every word of a value is taken as named by it.
    """
    expansion = expansion_terms(kb, question, feedback, EXPANSION_TERMS)
    by_question = kb.rank_documents(question, _DEPTH)
    by_expansion = kb.rank_documents(" ".join(expansion), _DEPTH) if expansion else []
    best = {p.doc_id: p for p in [*by_expansion, *by_question]}
    base, expanded = _normalised(by_question), _normalised(by_expansion)
    scores = {
        d: max(base.get(d, 0.0), 0.5 * base.get(d, 0.0) + 0.5 * expanded.get(d, 0.0))
        for d in best
    }
    known_ids = set(known)
    value_words = [set(terms(v)) for v in names]
    found = []
    for doc in sorted(scores, key=lambda d: (-scores[d], d)):
        if scores[doc] < RELEVANT_SHARE:
            break
        title_words = set(terms(best[doc].title))
        if doc in known_ids or any(w and w <= title_words for w in value_words):
            continue
        found.append(best[doc])
    return ProbeResult(tuple(found), tuple(expansion))


def _normalised(ranked: list[Passage]) -> dict[str, float]:
    top = ranked[0].score if ranked else 1.0
    return {p.doc_id: p.score / top for p in ranked}
