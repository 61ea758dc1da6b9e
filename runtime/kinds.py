"""The kind of thing each document is, told by what it shares with others.

The extractive planner keeps a plan's documents of one kind, and the corpus
probe proposes only documents of the kind the answer already cites.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from runtime.kb import KnowledgeBase
from runtime.text import stem, terms

Profile = Mapping[str, float]
"""Weighted words of a document, scaled to unit length."""

CORE_SHARE = 0.5
"""Share of the median document's affinity a document needs to be of the core."""


@dataclass(frozen=True)
class Kinds:
    """What kind of thing each document is, told by what it shares with others.

    Documents of one kind share section headings ("Plot", "Reception"; "Early
    life", "Career"; "Meteorological history", "Impact") and the words their
    leads define them with ("film", "album", "cyclone", "election"). Each
    document has two profiles: the stemmed words of its top-level headings, and
    those of its lead, each word weighted by its rarity among documents. A word
    no other document has tells nothing of a kind and is left out.
    """

    headings: Mapping[str, Profile]
    leads: Mapping[str, Profile]

    def similarity(self, a: str, b: str) -> float:
        """How alike the kinds of two documents are, 0 to 1 (mean of two cosines)."""
        return (
            _cosine(self.headings.get(a, {}), self.headings.get(b, {}))
            + _cosine(self.leads.get(a, {}), self.leads.get(b, {}))
        ) / 2

    def affinity(self, doc: str, others: Iterable[str]) -> float:
        """The mean similarity of `doc` to the other documents; 0.0 for none."""
        sims = [self.similarity(doc, other) for other in others if other != doc]
        return sum(sims) / len(sims) if sims else 0.0

    def core(self, docs: Sequence[str]) -> list[str]:
        """The documents that agree in kind with the others, in their order.

        One agrees when its mean similarity to the others reaches CORE_SHARE of
        the median one's: a document a search reached for a stray word
        stands apart. Fewer than three documents are all kept.
        """
        if len(docs) < 3:
            return list(docs)
        affinity = {doc: self.affinity(doc, docs) for doc in docs}
        median = sorted(affinity.values())[len(docs) // 2]
        return [doc for doc in docs if affinity[doc] >= CORE_SHARE * median]

    def agreeing(self, docs: Iterable[str], core: Sequence[str]) -> list[str]:
        """Those of `docs` as like the core documents as they are like each other.

        A document's mean similarity to the core must reach that of the core
        document least like the rest. A core of fewer than two documents tells
        no kind: every document agrees with it.
        """
        if len(core) < 2:
            return list(docs)
        floor = min(self.affinity(member, core) for member in core)
        return [doc for doc in docs if self.affinity(doc, core) >= floor]


def _cosine(a: Profile, b: Profile) -> float:
    """The cosine of two unit-length profiles."""
    if len(b) < len(a):
        a, b = b, a
    return sum(weight * b.get(word, 0.0) for word, weight in a.items())


def _profiles(counts: Mapping[str, Counter[str]], total: int) -> dict[str, Profile]:
    """Unit-length profiles of word counts: log-scaled, weighted by rarity.

    A word weighs log(total / documents with it), `total` being the number of
    documents; a word of one document only is left out.
    """
    spread = Counter(word for words in counts.values() for word in words)
    profiles: dict[str, Profile] = {}
    for doc, words in counts.items():
        weights = {
            w: (1 + math.log(n)) * math.log(total / spread[w])
            for w, n in words.items()
            if 1 < spread[w] < total
        }
        norm = math.sqrt(sum(v * v for v in weights.values())) or 1.0
        profiles[doc] = {w: v / norm for w, v in weights.items()}
    return profiles


def kinds_of(rows: Sequence[tuple[str, bool, str, str]]) -> Kinds:
    """The kinds of the documents of (doc_id, is lead, section, text) passage rows.

    The lead is a document's first passage; headings are the top-level ones of
    its other sections, less the lead's own.
    """
    lead_sections = {doc: section for doc, first, section, _ in rows if first}
    headings: dict[str, Counter[str]] = defaultdict(Counter)
    leads: dict[str, Counter[str]] = defaultdict(Counter)
    for doc, first, section, text in rows:
        if first:
            leads[doc].update(stem(w) for w in terms(text) if not w.isdigit())
        elif section != lead_sections.get(doc):
            for word in terms(section.split(" > ")[0]):
                headings[doc][stem(word)] = 1
    total = len({row[0] for row in rows})
    return Kinds(_profiles(headings, total), _profiles(leads, total))


def document_kinds(kb: KnowledgeBase) -> Kinds:
    """The kinds of every document of `kb`, read once per version of its file."""
    return _read_kinds(kb, kb.version())


@functools.lru_cache(maxsize=8)
def _read_kinds(kb: KnowledgeBase, version: tuple[int, int, int, int]) -> Kinds:
    return kinds_of(kb.lead_and_sections())
