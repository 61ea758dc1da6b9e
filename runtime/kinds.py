"""The kind of thing each document is, told by what it shares with others.

Documents of one kind share section headings and the words their leads define
them with. The knowledge base's documents fall into kinds (`corpus_kinds`):
a plan spreads over them, and re-delegation looks for kinds an answer does not
cite yet.
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
LABEL_HEADINGS = 2
"""Section headings that name a kind."""
KIN_FACTOR = 3.0
"""How many times more alike than two documents of the corpus on average a
document must be to a kind's documents to be of their kind."""
OTHERS = "Other documents"
"""The kind of documents that share their kind with no other."""


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
            _dot(self.headings.get(a, {}), self.headings.get(b, {}))
            + _dot(self.leads.get(a, {}), self.leads.get(b, {}))
        ) / 2

    def affinities(self, docs: Iterable[str], others: Iterable[str]) -> list[float]:
        """The affinity of each of `docs` to `others`, in one pass over `others`.

        A cosine is linear in each profile, so a document's summed similarity
        to the others is its similarity to their summed profiles, less its own
        for each time it is among them.
        """
        crowd = list(others)
        times = Counter(crowd)
        headings = _sum(self.headings.get(other, {}) for other in crowd)
        leads = _sum(self.leads.get(other, {}) for other in crowd)
        means = []
        for doc in docs:
            count = len(crowd) - times[doc]
            total = (
                _dot(self.headings.get(doc, {}), headings)
                + _dot(self.leads.get(doc, {}), leads)
            ) / 2 - times[doc] * self.similarity(doc, doc)
            means.append(total / count if count else 0.0)
        return means

    def core(self, docs: Sequence[str]) -> list[str]:
        """The documents that agree in kind with the others, in their order.

        One agrees when its mean similarity to the others reaches CORE_SHARE of
        the median one's: a document a search reached for a stray word
        stands apart. Fewer than three documents are all kept.
        """
        if len(docs) < 3:
            return list(docs)
        affinity = dict(zip(docs, self.affinities(docs, docs), strict=True))
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
        floor = min(self.affinities(core, core))
        docs = list(docs)
        return [
            doc
            for doc, affinity in zip(docs, self.affinities(docs, core), strict=True)
            if affinity >= floor
        ]

    def groups(self, docs: Sequence[str]) -> list[list[str]]:
        """The documents grouped by kind, in order of first appearance.

        A document joins the group it is most like (by mean similarity to its
        members) when it is KIN_FACTOR times as like that group as the
        documents are like each other on average; else it starts a group of
        its own. Each
        group keeps the sum of its members' profiles, so a document is compared
        with each group once, not with each member.
        """
        floor = KIN_FACTOR * self._mean_similarity(docs)
        groups: list[_Group] = []
        for doc in docs:
            scored = [(group.affinity(self, doc), group) for group in groups]
            best = max(scored, key=lambda pair: pair[0], default=None)
            if best is not None and best[0] >= floor:
                best[1].add(self, doc)
            else:
                groups.append(_Group.of(self, doc))
        return [group.members for group in groups]

    def _mean_similarity(self, docs: Sequence[str]) -> float:
        """The mean similarity of the pairs of `docs`, from the sums of profiles."""
        n = len(docs)
        if n < 2:
            return 0.0
        total = 0.0
        for profiles in (self.headings, self.leads):
            summed = _sum(profiles.get(doc, {}) for doc in docs)
            own = sum(_dot(profiles.get(d, {}), profiles.get(d, {})) for d in docs)
            total += (_dot(summed, summed) - own) / (n * (n - 1))
        return total / 2


@dataclass
class _Group:
    """Documents of one kind, and the sums of their two profiles."""

    members: list[str]
    headings: dict[str, float]
    leads: dict[str, float]

    @classmethod
    def of(cls, kinds: Kinds, doc: str) -> _Group:
        group = cls([], {}, {})
        group.add(kinds, doc)
        return group

    def add(self, kinds: Kinds, doc: str) -> None:
        self.members.append(doc)
        for summed, profiles in (
            (self.headings, kinds.headings),
            (self.leads, kinds.leads),
        ):
            for word, weight in profiles.get(doc, {}).items():
                summed[word] = summed.get(word, 0.0) + weight

    def affinity(self, kinds: Kinds, doc: str) -> float:
        """The mean similarity of `doc` to the members."""
        return (
            _dot(kinds.headings.get(doc, {}), self.headings)
            + _dot(kinds.leads.get(doc, {}), self.leads)
        ) / (2 * len(self.members))


def _dot(a: Profile, b: Profile) -> float:
    """The dot product of two profiles (their cosine when both are unit length)."""
    if len(b) < len(a):
        a, b = b, a
    return sum(weight * b.get(word, 0.0) for word, weight in a.items())


def _sum(profiles: Iterable[Profile]) -> dict[str, float]:
    summed: dict[str, float] = defaultdict(float)
    for profile in profiles:
        for word, weight in profile.items():
            summed[word] += weight
    return summed


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


Row = tuple[str, bool, str, str]
"""A passage as (doc_id, whether it is the lead, section, lead text)."""


def kinds_of(rows: Sequence[Row]) -> Kinds:
    """The kinds of the documents of passage rows.

    The lead is a document's first passage; headings are the top-level ones of
    its other sections, less the lead's own.
    """
    headings: dict[str, Counter[str]] = defaultdict(Counter)
    leads: dict[str, Counter[str]] = defaultdict(Counter)
    for doc, first, _, text in rows:
        if first:
            leads[doc].update(stem(w) for w in terms(text) if not w.isdigit())
    for doc, heads in top_headings(rows).items():
        for word in terms(" ".join(heads)):
            headings[doc][stem(word)] = 1
    total = len({row[0] for row in rows})
    return Kinds(_profiles(headings, total), _profiles(leads, total))


def top_headings(rows: Sequence[Row]) -> dict[str, list[str]]:
    """Each document's top-level section headings, in order, less its lead's."""
    lead_sections = {doc: section for doc, first, section, _ in rows if first}
    headings: dict[str, list[str]] = defaultdict(list)
    for doc, first, section, _ in rows:
        top = section.split(" > ")[0]
        if not first and section != lead_sections.get(doc):
            if top not in headings[doc]:
                headings[doc].append(top)
    return headings


@dataclass(frozen=True)
class CorpusKinds:
    """The kind of every document of a knowledge base, named by its headings.

    A kind's label names the top-level headings most of its documents share
    ("Documents with sections Career, Personal life"); documents that share
    their kind with no other are of the kind OTHERS.
    """

    label_of: Mapping[str, str]

    def of(self, doc_id: str) -> str:
        """The label of the kind of `doc_id`; OTHERS for a document not known."""
        return self.label_of.get(doc_id, OTHERS)

    def key(self, doc_id: str) -> str:
        """What tells the kind of `doc_id` apart: its label, or itself for OTHERS.

        A document that shares its kind with no other is a kind of its own.
        """
        label = self.of(doc_id)
        return doc_id if label == OTHERS else label

    @functools.cached_property
    def sizes(self) -> Mapping[str, int]:
        """How many documents each kind holds, by `key`."""
        return Counter(self.key(doc) for doc in self.label_of)


def kind_label(headings: Mapping[str, Sequence[str]], docs: Sequence[str]) -> str:
    """A group's name: the top-level headings most of its documents share."""
    shared = Counter(h for doc in docs for h in headings.get(doc, ()))
    common = [h for h, n in shared.most_common(LABEL_HEADINGS) if n > 1]
    if len(docs) < 2 or not common:
        return OTHERS
    return "Documents with sections " + ", ".join(common)


def document_kinds(kb: KnowledgeBase) -> Kinds:
    """The kinds of every document of `kb`, read once per version of its file."""
    return _read(kb, kb.version())[0]


def corpus_kinds(kb: KnowledgeBase) -> CorpusKinds:
    """Every document of `kb` sorted into its kind, once per version of its file."""
    return _read(kb, kb.version())[1]


@functools.lru_cache(maxsize=8)
def _read(
    kb: KnowledgeBase, version: tuple[int, int, int, int]
) -> tuple[Kinds, CorpusKinds]:
    rows = kb.lead_and_sections()
    kinds = kinds_of(rows)
    headings = top_headings(rows)
    docs = sorted({row[0] for row in rows})
    label_of = {
        doc: kind_label(headings, group)
        for group in kinds.groups(docs)
        for doc in group
    }
    return kinds, CorpusKinds(label_of)
