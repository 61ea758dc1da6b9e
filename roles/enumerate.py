"""Enumerate what the plan missed: a second, independent look at the question.

`HeldValues` (LLM mode) owes a task to what the knowledge base holds for the
question and the lead's plan left out; `ModelEnumerator` (LLM mode) asks the
lead to list values the plan lacks; `CorpusProbe` (every mode) finds relevant
documents that nothing cites. A document is relevant when it scores
RELEVANT_SHARE of the best document's score for the question (see `probe`);
relevant documents that no finding cites and no plan value names are values
the plan never named. The probe looks for breadth: it proposes those of kinds
the answer does not cite yet first. Relevance comes from the question alone:
words of what the answer already cites would only find more of the same.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from roles.grounding import (
    Holdings,
    dated_title,
    interleaved,
    leads_reached,
    reached_by_part,
    round_robin,
)
from roles.plan import CorpusPlanner, DimensionDraft
from runtime.kb import RELEVANT_SHARE, KnowledgeBase, Passage
from runtime.kinds import CorpusKinds, corpus_kinds, document_kinds
from runtime.models import lead_deadline
from runtime.regions import region_named
from runtime.structured import ainvoke_structured, schema_instructions
from runtime.text import period_of, terms, years
from state.findings import Finding
from state.plan import CoveragePlan, normalize, refusal
from state.usage import Usage

PROBED = " (found by the corpus probe)"
"""Ends the name of a dimension of documents the probe found: their kind, and
that the plan did not name them."""
_DEPTH = 100


@dataclass(frozen=True)
class Enumerated:
    """Values an enumerator found missing, by dimension, and what it cost."""

    values: dict[str, list[str]]
    usage: Usage = Usage()


class Enumerator(Protocol):
    """Finds values a complete answer needs that the plan does not name."""

    async def missing(
        self, plan: CoveragePlan, findings: Sequence[Finding]
    ) -> Enumerated:
        """Values `plan` lacks, given the findings so far."""
        ...


ENUMERATE_PROMPT = """You check a research plan for breadth, independently of
whoever wrote it. Given the question and the dimensions and values the plan
names, list the values a complete answer must also cover that the plan does not
name: more values of its dimensions, or a dimension it missed. Name only values
that are distinct from the ones listed. When you are shown what the knowledge
base holds that the plan does not name, name those values by their numbers. If
nothing is missing, return an empty list.

{format}"""


class Enumeration(BaseModel):
    """Values a complete answer needs that the plan does not name, by dimension."""

    dimensions: list[DimensionDraft] = Field(default_factory=list, max_length=6)


@dataclass(frozen=True)
class ModelEnumerator:
    """The lead's second, independent enumeration of values the plan lacks.

    Like the planner, it is shown what the knowledge base holds for the
    question (less what the plan names), numbered, and code spells the
    numbers it names.
    """

    model: BaseChatModel
    limit: int
    timeout_s: float
    corpus: CorpusPlanner | None = None

    async def missing(
        self, plan: CoveragePlan, findings: Sequence[Finding]
    ) -> Enumerated:
        """Ask the lead, within its deadline; keep only new values of the question.

        A value the plan has (or one of its values with words added), the
        question itself, a dimension's name, or text copied from the prompt
        (such as the plan's own list) is left out; a dimension named after a
        listed document takes its values' kind.
        """
        named = "\n".join(f"- {d.name}: {', '.join(d.values)}" for d in plan.dimensions)
        prompt = ENUMERATE_PROMPT.format(format=schema_instructions(Enumeration))
        listing = f"Question: {plan.question}\n\nThe plan names:\n{named}"
        holdings = Holdings()
        if self.corpus is not None:
            holdings = await asyncio.to_thread(self.corpus.holdings, plan.question)
        held = holdings.listing(leave_out=plan.values)
        asked = f"{listing}\n\n{UNNAMED_HOLDINGS}\n{held}" if held else listing
        messages = [SystemMessage(prompt), HumanMessage(asked)]
        async with lead_deadline(self.timeout_s, "enumerating"):
            answer, usage = await ainvoke_structured(self.model, messages, Enumeration)
        known = {normalize(v) for v in plan.values}
        planned = Holdings(plan.values)
        spelled = [
            (d.name, [v for v in map(holdings.spell, d.values) if v])
            for d in answer.dimensions
        ]
        renamed = [(holdings.dimension_name(n, vs), vs) for n, vs in spelled]
        names = [d.name for d in plan.dimensions] + [name for name, _ in renamed]
        missing: dict[str, list[str]] = {}
        for name, values in renamed:
            for value in values:
                why = refusal(value, plan.question, names, f"{prompt}\n{listing}")
                again = normalize(value) in known or planned.same_as_item(value)
                if why is None and not again:
                    known.add(normalize(value))
                    missing.setdefault(name, []).append(value)
                if sum(map(len, missing.values())) == self.limit:
                    return Enumerated(missing, usage)
        return Enumerated(missing, usage)


UNNAMED_HOLDINGS = (
    "What the knowledge base holds that the plan does not name (name these by number):"
)


class ByCode:
    """An enumerator that reads only the knowledge base: it runs off the event loop."""

    async def missing(
        self, plan: CoveragePlan, findings: Sequence[Finding]
    ) -> Enumerated:
        """`_missing`, in a worker thread."""
        return await asyncio.to_thread(self._missing, plan, findings)

    def _missing(self, plan: CoveragePlan, findings: Sequence[Finding]) -> Enumerated:
        raise NotImplementedError


@dataclass(frozen=True)
class HeldValues(ByCode):
    """What the knowledge base holds for the question that the plan leaves out.

    The lead chose its plan from these holdings (`roles.grounding`). Those it
    left out, that no value names and no verified finding cites, are values
    all the same: the knowledge base's own answer to the question is the floor
    of a plan's breadth, whatever a model chose. The best of each kind first,
    each under its kind's label. Holdings of one item or none add nothing: the
    knowledge base's own plan would answer such a question directly.
    """

    corpus: CorpusPlanner
    limit: int

    def _missing(self, plan: CoveragePlan, findings: Sequence[Finding]) -> Enumerated:
        holdings = self.corpus.holdings(plan.question)
        if len(holdings.items) < 2:
            return Enumerated({})
        named = {normalize(v) for v in plan.values}
        named |= {normalize(f.source.title) for f in findings if f.verified}
        names = [d.name for d in plan.dimensions]
        unnamed = [
            [
                (label, item)
                for n in numbers
                if normalize(item := holdings.items[n - 1]) not in named
                and refusal(item, plan.question, names, "") is None
            ]
            for label, numbers in holdings.groups
        ]
        missing: dict[str, list[str]] = {}
        for label, item in round_robin(unnamed)[: self.limit]:
            missing.setdefault(label, []).append(item)
        return Enumerated(missing)


@dataclass(frozen=True)
class CorpusProbe(ByCode):
    """Relevant documents of kinds the answer does not cite yet.

    Of the relevant documents no finding cites and no value names (see
    `probe`), of the question's period when it names years (see
    `KnowledgeBase.in_period`), the probe proposes those of a kind
    (`corpus_kinds`) the question is about and the answer does not cite yet
    (`kinds_reached`: breadth); those that agree in kind with the documents
    cited for the plan's own values (the corpus's kinds are coarse: one may
    hold football finals and a cycling tour); and those with a section on a
    year of the period. Kinds no verified finding cites come first, the best
    of each kind first (`breadth_first`). Each goes to the dimension of its
    kind.
    """

    kb: KnowledgeBase
    limit: int

    def _missing(self, plan: CoveragePlan, findings: Sequence[Finding]) -> Enumerated:
        verified = [f for f in findings if f.verified]
        found = probe(
            self.kb,
            plan.question,
            known={f.source.doc_id for f in verified},
            names=plan.values,
        )
        period = period_of(plan.question)
        kinds_of = document_kinds(self.kb)
        kin = set(
            kinds_of.agreeing(
                [p.doc_id for p in found],
                kinds_of.core(planned_documents(plan, verified)),
            )
        )
        kinds = corpus_kinds(self.kb)
        cited = {kinds.key(f.source.doc_id) for f in verified}
        timely = [p for p in found if self.kb.in_period(p, period)]
        new_kinds = kinds_reached(self.kb, plan.question, timely, kinds) - cited
        proposed = [
            p
            for p in timely
            if (
                p.doc_id in kin
                or bool(period & years(p.section))
                or kinds.key(p.doc_id) in new_kinds
            )
            and refusal(p.title, plan.question, [probed(kinds.of(p.doc_id))], "")
            is None
        ]
        missing: dict[str, list[str]] = {}
        for doc in breadth_first(proposed, kinds.key, cited)[: self.limit]:
            missing.setdefault(probed(kinds.of(doc.doc_id)), []).append(
                dated_title(self.kb, doc, period)
            )
        return Enumerated(missing)


def kinds_reached(
    kb: KnowledgeBase, question: str, docs: Sequence[Passage], kinds: CorpusKinds
) -> set[str]:
    """The kinds (by `CorpusKinds.key`) the question is about, told by `docs`.

    The question is about a document when it reaches its lead
    (`leads_reached`); it is about a kind when it is about two of its
    documents, or about the only one. One document of a larger kind is a
    stray match.
    """
    about = {lead.doc_id for lead in leads_reached(kb, question)}
    counts = Counter(kinds.key(d.doc_id) for d in docs if d.doc_id in about)
    return {k for k, n in counts.items() if n >= min(2, kinds.sizes.get(k, 1))}


def probed(kind: str) -> str:
    """The dimension of documents of `kind` that the probe found."""
    return f"{kind}{PROBED}"


def planned_documents(plan: CoveragePlan, verified: Sequence[Finding]) -> list[str]:
    """Documents cited for the plan's own values, not for values the probe added."""
    added = {v for d in plan.dimensions if d.name.endswith(PROBED) for v in d.values}
    return list(
        dict.fromkeys(
            f.source.doc_id for f in verified if any(v not in added for v in f.values)
        )
    )


def breadth_first(
    docs: Sequence[Passage], kind: Callable[[str], str], cited: Collection[str]
) -> list[Passage]:
    """`docs` (best first) reordered for breadth.

    Documents of kinds the answer does not cite come first; within each tier,
    the best document of each kind, then the second best, and so on.
    """
    rank: dict[str, int] = defaultdict(int)
    order = []
    for at, doc in enumerate(docs):
        of = kind(doc.doc_id)
        order.append((of in cited, rank[of], at))
        rank[of] += 1
    return [docs[at] for *_, at in sorted(order)]


def enumerators(
    model: BaseChatModel | None,
    kb: KnowledgeBase,
    *,
    limit: int,
    timeout_s: float,
    max_facets: int,
) -> list[Enumerator]:
    """The enumerators of a run, in the order they extend the plan.

    In LLM mode, what the lead left of the holdings it planned from (those of a
    corpus planner of `max_facets`, as the run's planner), then the lead's own
    enumeration; in every mode, the corpus probe last.
    """
    probe: list[Enumerator] = [CorpusProbe(kb, limit)]
    if model is None:
        return probe
    corpus = CorpusPlanner(kb, max_facets)
    lead = ModelEnumerator(model, limit, timeout_s, corpus)
    return [HeldValues(corpus, limit), lead, *probe]


def probe(
    kb: KnowledgeBase, question: str, known: Iterable[str], names: Iterable[str]
) -> list[Passage]:
    """Documents relevant to `question`, best first, not `known` and unnamed.

    Relevant is scoring RELEVANT_SHARE of the best document's score; for a
    question scoped to a region, reached by it or by it asked of a country of
    the region (`reached_by_part`), as the lead's list is. `known` are doc ids
    already cited; `names` are plan values: a document whose title (dated to
    the question's period, see `dated_title`) holds every word of a value is
    taken as named by it.
    """
    period = period_of(question)
    if region_named(question):
        relevant = interleaved(reached_by_part(kb, question, _DEPTH))
    else:
        ranked = kb.rank_documents(question, _DEPTH)
        relevant = [d for d in ranked if d.score >= RELEVANT_SHARE * ranked[0].score]
    known_ids = set(known)
    value_words = [set(terms(v)) for v in names]
    return [
        doc
        for doc in relevant
        if doc.doc_id not in known_ids
        and not any(
            w and w <= set(terms(dated_title(kb, doc, period))) for w in value_words
        )
    ]
