"""Grounding: what the knowledge base holds for a question, numbered for the lead.

Before the lead plans (and when it looks for what a plan missed) it is shown
the documents the question reaches, of its period, grouped by kind and
numbered; when one document stands out, its sections the question reaches.
The lead chooses by number and code spells what it chose: a model points at
what is there instead of inventing values from nothing. A question that names a
continent is shown the documents in its countries, one that names a country
the documents in it (`runtime.regions`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from typing import TypeVar

from runtime.kb import RELEVANT_SHARE, KnowledgeBase, Passage, lead_id
from runtime.kinds import OTHERS, corpus_kinds
from runtime.listed import part_queries
from runtime.regions import Region, countries_placed, region_named
from runtime.subjects import subject_words, subjects_named
from runtime.text import names, period_of, stems, terms, years
from state.plan import named_item, normalize

T = TypeVar("T")

_LEAD_DEPTH = 300
"""Passages searched for the leads a question reaches."""
_SPOKEN_WORDS = 2
"""Words of a subject's list a lead uses, at least, to speak of the subject."""
SEVERAL_KINDS = "Documents of several kinds"
"""A dimension a model named after a document, its values of several kinds."""


@dataclass(frozen=True)
class Holdings:
    """Values the knowledge base holds for a question, numbered from 1, by kind.

    Attributes:
        items: The values, in their numbers' order.
        groups: Each group's label and the numbers of its items.
    """

    items: tuple[str, ...] = ()
    groups: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def listing(self, leave_out: Sequence[str] = ()) -> str:
        """The numbered list a model chooses from, less the values `leave_out`."""
        left_out = {normalize(v) for v in leave_out}
        lines = []
        for label, numbers in self.groups:
            shown = [n for n in numbers if normalize(self.items[n - 1]) not in left_out]
            if shown:
                lines.append(f"{label}:")
                lines += [f"{n}. {self.items[n - 1]}" for n in shown]
        return "\n".join(lines)

    def spell(self, value: int | str) -> str | None:
        """The value a model named: a listed one, by number or as written; else its own.

        A value written as an item with words added or an ending changed
        ("2022 Cyclone Mocha", "China Eastern Airline Flight 5735") is that
        item (`same_as_item`). With nothing listed, a number is a value as
        written (a year); with a
        list, a number that names no item of it is None, and so is the label
        of one of its groups or words of it ("Background, Aftermath" of
        "Documents with sections Background, Aftermath"): a heading of the
        list is no value.
        """
        if not self.items:
            return str(value)
        listed = named_item(value, self.items) or self.same_as_item(value)
        if listed or not isinstance(value, str):
            return listed
        words = f" {normalize(value)} "
        headed = any(words in f" {normalize(label)} " for label, _ in self.groups)
        return None if headed else value

    def same_as_item(self, value: int | str) -> str | None:
        """The item whose content words (two or more) `value` holds, if one does.

        Words are compared by stem; of several such items, the one with the most
        words. Failing that, the one item that holds all of `value`'s words (two
        or more): "2022 Welsh Open" is "2022 Welsh Open (snooker)", but "2022
        floods" is neither of two floods.
        """
        if not isinstance(value, str):
            return None
        written = stems(value)
        matching = [
            (len(words), item)
            for item in self.items
            if len(words := stems(item)) > 1 and words <= written
        ]
        if matching:
            return max(matching, key=lambda m: m[0])[1]
        holding = [item for item in self.items if written <= stems(item)]
        return holding[0] if len(written) > 1 and len(holding) == 1 else None

    def holds(self, value: str) -> bool:
        """Whether `value` is one of the listed items."""
        return normalize(value) in {normalize(item) for item in self.items}

    def names_an_item(self, name: str) -> bool:
        """Whether `name` and a listed item (two words or more each) hold one another.

        A model that names a dimension "Hungarian parliamentary election"
        copied an item ("2022 Hungarian parliamentary election"), and one that
        names it "Documents with sections Career, Personal life: Treat Williams"
        copied a line of the list: a document, not a dimension of the question.
        """
        words = f" {normalize(name)} "
        if len(words.split()) < 2:
            return False
        return any(
            words in f" {item} " or (len(item.split()) > 1 and f" {item} " in words)
            for item in map(normalize, self.items)
        )

    def kind_of(self, values: Sequence[str]) -> str | None:
        """The label of the one group that lists every value of `values`, if any."""
        wanted = {normalize(v) for v in values}
        labels = {
            label
            for label, numbers in self.groups
            for n in numbers
            if normalize(self.items[n - 1]) in wanted
        }
        every = all(self.holds(v) for v in values)
        return labels.pop() if every and len(labels) == 1 else None

    def copies_a_heading(self, name: str) -> bool:
        """Whether `name` is a heading of the list with more after it.

        "Documents with sections Impact, Meteorological history: 2022 West
        Java..." is a line of the list copied, whatever its items became.
        """
        words = f" {normalize(name)} "
        return any(
            f" {heading} " in words and heading != words.strip()
            for heading in (normalize(label) for label, _ in self.groups)
        )

    def dimension_name(self, name: str, values: Sequence[str]) -> str:
        """The name a model gave a dimension, unless it copied the list.

        A listed document is no dimension, nor is a heading of the list with
        more after it: the dimension then takes the kind its values are listed
        under, or `SEVERAL_KINDS`.
        """
        if not (self.names_an_item(name) or self.copies_a_heading(name)):
            return name
        return self.kind_of(values) or SEVERAL_KINDS


def reached_documents(
    kb: KnowledgeBase,
    question: str,
    limit: int,
    among: AbstractSet[str] | None = None,
) -> list[Passage]:
    """The best passage of each relevant document of the question's period.

    A document is relevant when its score reaches RELEVANT_SHARE of the
    runner-up's: one document that the question's words fit far better than
    any other (a builder whose summary says "companies" and "businesses") does
    not raise the bar for all the rest. When the question names the best
    document (its title), it is about that one, and the bar is the best's. At
    most `limit` are ranked, of the documents `among` when given.
    """
    period = period_of(question)
    ranked = kb.rank_documents(question, limit, among=among)
    docs = [d for d in ranked if kb.in_period(d, period)]
    if not docs:
        return []
    about_best = len(docs) == 1 or names(docs[0].title, question)
    bar = RELEVANT_SHARE * (docs[0] if about_best else docs[1]).score
    return [d for d in docs if d.score >= bar]


def leads_reached(kb: KnowledgeBase, question: str) -> list[Passage]:
    """The leads of the documents the question is about, best first.

    The question is about a document when it reaches the document's lead
    (which says what the document is) at RELEVANT_SHARE of its best passage's
    score, not only a passage that mentions its words.
    """
    hits = kb.search(question, _LEAD_DEPTH)
    floor = RELEVANT_SHARE * hits[0].score if hits else 0.0
    return [h for h in hits if h.passage_id == lead_id(h.doc_id) and h.score >= floor]


def countries_by_document(kb: KnowledgeBase) -> dict[str, frozenset[str]]:
    """The countries each document is in: those its title and lead place it in."""
    return of_each_lead(kb, _countries)


def lead_words(kb: KnowledgeBase) -> dict[str, frozenset[str]]:
    """The content words of each document's title and lead, by doc id."""
    return of_each_lead(kb, _words)


def of_each_lead(
    kb: KnowledgeBase, read: Callable[[str], frozenset[str]]
) -> dict[str, frozenset[str]]:
    """What `read` makes of each document's title and lead, by doc id.

    Read once per version of the knowledge base's file.
    """
    return _of_each_lead(kb, kb.version(), read)


@functools.lru_cache(maxsize=8)
def _of_each_lead(
    kb: KnowledgeBase,
    version: tuple[int, int, int, int],
    read: Callable[[str], frozenset[str]],
) -> dict[str, frozenset[str]]:
    return {doc: read(lead) for doc, lead in kb.leads().items()}


def _countries(lead: str) -> frozenset[str]:
    return frozenset(countries_placed(lead))


def _words(lead: str) -> frozenset[str]:
    return frozenset(terms(lead))


def documents_by_country(kb: KnowledgeBase, region: Region) -> dict[str, set[str]]:
    """The documents in each country of `region` that some document is in."""
    in_country: dict[str, set[str]] = {}
    for doc, named in countries_by_document(kb).items():
        for country in filter(region.holds, named):
            in_country.setdefault(country, set()).add(doc)
    return in_country


def in_scope(kb: KnowledgeBase, question: str) -> frozenset[str] | None:
    """The documents in the region the question names, if it names one.

    A document is in a region when it is in a country of it
    (`documents_by_country`, `region_named`). None as well when no document
    of the knowledge base is in any country (`documents_in`).
    """
    region = region_named(question)
    return None if region is None else documents_in(kb, region)


def documents_in(kb: KnowledgeBase, region: Region) -> frozenset[str] | None:
    """The documents in `region`; None when no document is in any country.

    A knowledge base that says nothing of places cannot scope a question by
    one.
    """
    if not any(countries_by_document(kb).values()):
        return None
    return frozenset().union(*documents_by_country(kb, region).values())


def reached_by_part(
    kb: KnowledgeBase, question: str, limit: int
) -> list[list[Passage]]:
    """The documents each thing the question lists reaches (`part_queries`).

    One ranking (`reached_documents`) for each listed thing; a question that
    lists nothing has one, its own. A question scoped to a region reaches only
    the documents in it (`in_scope`), and has a ranking more for each country of
    the region (`reached_by_country`); one that names a country is asked once
    more without its name (`Region.unnamed`): the scope already holds the
    country, and the documents whose titles say its name would set the bar.
    """
    region = region_named(question)
    scope = None if region is None else documents_in(kb, region)
    asked = [question, region.unnamed(question)] if region else [question]
    queries = dict.fromkeys(q for text in asked for q in part_queries(text))
    rankings = [reached_documents(kb, query, limit, among=scope) for query in queries]
    return (
        rankings
        + reached_by_subject(kb, question, limit, among=scope)
        + reached_by_country(kb, question, limit)
    )


def reached_by_subject(
    kb: KnowledgeBase,
    question: str,
    limit: int,
    among: AbstractSet[str] | None = None,
) -> list[list[Passage]]:
    """For each subject the question names, the leads of its period that speak of it.

    A lead speaks of a subject by the words of its list it uses
    (`runtime.subjects`); the leads using most come first, and those using
    fewer than RELEVANT_SHARE of the best's are left out, as are those using
    fewer than _SPOKEN_WORDS. At most `limit` of the documents `among` when given.
    """
    period = period_of(question)
    words = lead_words(kb)
    rankings = []
    for subject in subjects_named(question):
        counts = {
            doc: len(subject_words(subject, used))
            for doc, used in words.items()
            if among is None or doc in among
        }
        spoken = sorted(
            (doc for doc, n in counts.items() if n >= _SPOKEN_WORDS),
            key=lambda d: (-counts[d], d),
        )
        ids = [lead_id(doc) for doc in spoken]
        leads = kb.passages(ids)
        dated = [leads[i] for i in ids if i in leads and kb.in_period(leads[i], period)]
        if dated:
            bar = RELEVANT_SHARE * counts[dated[0].doc_id]
            rankings.append([p for p in dated if counts[p.doc_id] >= bar][:limit])
    return rankings


def reached_by_country(
    kb: KnowledgeBase, question: str, limit: int
) -> list[list[Passage]]:
    """The question asked of each country of the region it names, in its documents.

    A region's breadth is its countries, whose documents seldom say the
    region's name: "What happened in Europe?" is asked as "What happened in
    Hungary?" of the documents in Hungary, and so for each country some
    document is in, the country with most documents first. None for a
    question that names no region.
    """
    region = region_named(question)
    if region is None:
        return []
    in_country = documents_by_country(kb, region)
    by_size = sorted(in_country, key=lambda c: (-len(in_country[c]), c))
    return [
        reached_documents(kb, region.put(question, c), limit, among=in_country[c])
        for c in by_size
    ]


def interleaved(rankings: Iterable[Sequence[Passage]]) -> list[Passage]:
    """The best document of each ranking, then the second best, and so on, once each."""
    chosen: dict[str, Passage] = {}
    for doc in round_robin(list(rankings)):
        chosen.setdefault(doc.doc_id, doc)
    return list(chosen.values())


def round_robin(columns: Sequence[Sequence[T]]) -> list[T]:
    """The first of each column, then the second of each, and so on."""
    depth = max(map(len, columns), default=0)
    return [column[at] for at in range(depth) for column in columns if at < len(column)]


def relevant_sections(kb: KnowledgeBase, question: str, doc: Passage) -> list[str]:
    """Top-level sections of `doc` that the question's own words reach."""
    title_words = set(terms(doc.title))
    asked = " ".join(t for t in terms(question) if t not in title_words)
    hits = kb.search(asked, 50, doc_id=doc.doc_id)
    if not hits:
        return []
    best = hits[0].score
    return list(
        dict.fromkeys(
            h.section.split(" > ")[0] for h in hits if h.score >= RELEVANT_SHARE * best
        )
    )


def dated_title(kb: KnowledgeBase, doc: Passage, period: AbstractSet[str]) -> str:
    """A document as a value of a question's `period`: its title, dated if need be.

    A document of the period only by a section of it (a town's article with a
    section on its 2023 wildfire) is named with that section's heading
    ("Lahaina, Hawaii: 2023 wildfire"), so that its task reads that section and
    its evidence is of the period.
    """
    if kb.in_period(replace(doc, section=""), set(period)):
        return doc.title
    dated = [h for h in doc.section.split(" > ") if period & years(h)]
    return f"{doc.title}: {dated[-1]}" if dated else doc.title


def titles_by_kind(
    kb: KnowledgeBase, docs: Sequence[Passage], period: AbstractSet[str]
) -> dict[str, list[str]]:
    """The documents' titles by the label of their kind, kinds in order of first.

    Titles are dated to the question's `period` (`dated_title`).
    """
    kinds = corpus_kinds(kb)
    by_kind: dict[str, list[str]] = {}
    for doc in docs:
        by_kind.setdefault(kinds.of(doc.doc_id), []).append(
            dated_title(kb, doc, period)
        )
    return by_kind


def holdings_for(kb: KnowledgeBase, question: str, limit: int) -> Holdings:
    """What the knowledge base holds for `question`: at most `limit` values.

    The relevant documents of its period, the best for each thing it lists
    first (`reached_by_part`), taking turns with those of its period the
    question is about (`leads_reached`: a document whose passages say less of
    the question's words than others', but whose lead says it is what the
    question asks about), grouped by kind; when only one stands out, its
    sections the question reaches. Of a question scoped to a region, only
    documents in it (`in_scope`). Nothing for a question the knowledge base
    does not reach.
    """
    period = period_of(question)
    scope = in_scope(kb, question)
    about = [
        p
        for p in leads_reached(kb, question)
        if kb.in_period(p, period) and (scope is None or p.doc_id in scope)
    ]
    relevant = interleaved(reached_by_part(kb, question, limit * 2))
    docs = interleaved([relevant, about])[:limit]
    if len(docs) == 1:
        sections = relevant_sections(kb, question, docs[0])[:limit]
        parts = tuple(f"{docs[0].title}: {s}" for s in sections)
        return Holdings(parts, ((docs[0].title, tuple(range(1, len(parts) + 1))),))
    by_kind = titles_by_kind(kb, docs, period)
    others = by_kind.pop(OTHERS, [])
    items: list[str] = []
    groups = []
    for label, titles in [*by_kind.items(), *([(OTHERS, others)] if others else [])]:
        numbers = tuple(range(len(items) + 1, len(items) + len(titles) + 1))
        items += titles
        groups.append((label, numbers))
    return Holdings(tuple(items), tuple(groups))
