"""Plan: the dimensions a question spans and the facets that own their values.

`ModelPlanner` asks the lead model; `CorpusPlanner` (extractive mode) plans
from what the knowledge base holds. `planner` picks one for a context.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Annotated, Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, StringConstraints, model_validator

from roles.grounding import (
    Holdings,
    documents_in,
    holdings_for,
    interleaved,
    reached_by_part,
    relevant_sections,
    titles_by_kind,
)
from runtime.kb import KnowledgeBase, Passage
from runtime.kinds import Kinds, document_kinds
from runtime.language import kb_language, language
from runtime.models import ModelTimeoutError, lead_deadline
from runtime.regions import region_named
from runtime.reliability import describe
from runtime.structured import (
    ModelOutputError,
    ainvoke_structured,
    schema_instructions,
)
from runtime.text import period_of, proper_names, terms
from state.plan import (
    CoveragePlan,
    Dimension,
    Facet,
    PlanLintError,
    Text,
    echoed,
    facet_id,
    facets_for_values,
    fresh_facet_ids,
    lint_plan,
    normalize,
    refusal,
    spread,
)
from state.question import QuestionError
from state.usage import Usage


@dataclass(frozen=True)
class Planned:
    """A linted plan and what the lead's calls for it cost."""

    plan: CoveragePlan
    usage: Usage = Usage()


class Planner(Protocol):
    """Plans the coverage of a question."""

    async def plan(self, question: str) -> Planned:
        """The linted plan for `question`."""
        ...


PLAN_PROMPT = """You plan research that answers a broad question completely.

First list the dimensions the question spans. A dimension is one way in which a
complete answer must vary, with every value the answer must cover, not only the
obvious ones. Dimensions and values come from the question and what it is
about, never from these instructions.

When you are shown what the knowledge base holds for the question (numbered,
grouped by kind), build the dimensions from it: name a value of that list by its
number. A value the list lacks may be written out; the report will say whether
anything covered it.

Then write at most {max_facets} facets. Each facet is one subagent's task: a
title, a brief that says exactly what to find, and the values it covers, as
numbers or spelled exactly as in the dimensions. Each value belongs to exactly
one facet.

Set direct_answer to true only when the question asks for one single fact that
one or two searches answer. A question about several things, events, people or
works is never answered directly.

{format}"""


Short = Annotated[Text, StringConstraints(max_length=80)]
"""A name or a value: a few words. Bounds in the schema bound what a model writes."""
Value = int | Short
"""A value: the number of a listed one, or its words."""


class DimensionDraft(BaseModel):
    """One way in which a complete answer must vary."""

    name: Short = Field(description="What varies, in a few words.")
    values: list[Value] = Field(
        max_length=12,
        description="Every value a complete answer must cover: the number of a "
        "listed value, or a few words.",
    )


class FacetDraft(BaseModel):
    """One subagent's task."""

    title: Short = Field(description="A short title.")
    brief: Annotated[Text, StringConstraints(max_length=300)] = Field(
        description="Exactly what the subagent must find out."
    )
    values: list[Value] = Field(
        default_factory=list,
        max_length=12,
        description="The values this task covers, as in the dimensions.",
    )


class PlanDraft(BaseModel):
    """A research plan for the question."""

    direct_answer: bool = Field(
        default=False,
        description="True only when one or two searches answer a single fact.",
    )
    dimensions: list[DimensionDraft] = Field(
        default_factory=list,
        max_length=6,
        description="The ways a complete answer must vary.",
    )
    facets: list[FacetDraft] = Field(
        default_factory=list, max_length=12, description="The subagents' tasks."
    )

    @model_validator(mode="after")
    def _delegates_or_answers(self) -> PlanDraft:
        if not self.direct_answer and not any(d.values for d in self.dimensions):
            raise ValueError("a plan needs dimensions with values unless direct_answer")
        return self


@dataclass(frozen=True)
class ModelPlanner:
    """The lead model plans; a plan the lint rejects gets one more try, then code.

    The lead is shown what the knowledge base holds for the question
    (`roles.grounding`) and names those values by number; code spells them. A
    plan that names none of what it was shown gets the knowledge base's own
    plan first (`grounded`): values invented from nothing never replace what is
    there. Facets are numbered by code (f0, f1, ...); routing, not the lead,
    gives them agents. A plan that says `direct_answer` but lists several
    values is taken as the plan it is.
    """

    model: BaseChatModel
    max_facets: int
    timeout_s: float
    corpus: CorpusPlanner | None = None

    async def plan(self, question: str) -> Planned:
        """Ask the lead for a plan within its deadline; lint, repair, spread it."""
        async with lead_deadline(self.timeout_s, "planning"):
            planned = await self._plan(question)
        return Planned(spread(planned.plan, self.max_facets), planned.usage)

    async def _plan(self, question: str) -> Planned:
        if self.corpus is None:
            return await self._drafted(question, Holdings())
        holdings = await asyncio.to_thread(self.corpus.holdings, question)
        planned = await self._drafted(question, holdings)
        plan = planned.plan
        if plan.direct_answer or not holdings.items:
            return planned
        if any(map(holdings.holds, plan.values)):
            return planned
        corpus = await self.corpus.plan(question)
        return Planned(grounded(planned.plan, corpus.plan), planned.usage)

    async def _drafted(self, question: str, holdings: Holdings) -> Planned:
        prompt = PLAN_PROMPT.format(
            max_facets=self.max_facets,
            format=schema_instructions(PlanDraft),
        )
        asked = question
        if holdings.items:
            asked += f"\n\n{HOLDINGS_HEADER}\n{holdings.listing()}"
        messages = [SystemMessage(prompt), HumanMessage(asked)]
        draft, usage = await ainvoke_structured(self.model, messages, PlanDraft)
        try:
            plan = self._to_plan(question, draft, holdings, prompt)
            return Planned(lint_plan(plan, prompt), usage)
        except PlanLintError as err:
            messages += [HumanMessage(f"The plan was rejected: {err}. Fix it.")]
            try:
                draft, used = await ainvoke_structured(self.model, messages, PlanDraft)
            except ModelOutputError as invalid:
                raise ModelOutputError(str(invalid), usage + invalid.usage) from err
            usage += used
        plan = self._to_plan(question, draft, holdings, prompt)
        try:
            return Planned(lint_plan(plan, prompt), usage)
        except PlanLintError as err:
            repaired = repair(plan, err)
            if not repaired.values:
                raise ModelOutputError(
                    f"the lead's plan has no usable value: {err}", usage
                ) from err
            return Planned(lint_plan(repaired), usage)

    def _to_plan(
        self, question: str, draft: PlanDraft, holdings: Holdings, prompt: str
    ) -> CoveragePlan:
        """The draft as a plan, each value spelled by code (`Holdings.spell`).

        A facet's title or brief copied from the prompt's own wording (its
        instructions, the holdings' header) says nothing of the facet: code
        writes one from its values, as for a facet of the knowledge base's plan.
        So does a dimension named after an item of the holdings (a document is
        no dimension): it takes the kind its values are listed under. A value
        listed again (a small model copies the whole list into every dimension
        and facet) stays where it was listed first.
        """

        def spelled(values: list[int | str], taken: set[str]) -> tuple[str, ...]:
            """The values spelled, less those in `taken`; adds them to `taken`."""
            named = (holdings.spell(v) for v in values)
            first = tuple(dict.fromkeys(v for v in named if v and v not in taken))
            taken.update(first)
            return first

        by_name: dict[str, tuple[str, ...]] = {}
        in_dimensions: set[str] = set()
        for drafted in draft.dimensions:
            values = spelled(drafted.values, in_dimensions)
            name = holdings.dimension_name(drafted.name, values)
            by_name[name] = (*by_name.get(name, ()), *values)
        dimensions = list(by_name.items())
        if draft.direct_answer and len(in_dimensions) < 2:
            return CoveragePlan.direct(question)
        in_facets: set[str] = set()
        facets = [(f, spelled(f.values, in_facets)) for f in draft.facets]

        def facet(number: int, written: FacetDraft, values: tuple[str, ...]) -> Facet:
            (made,) = facets_for_values(question, [", ".join(values)])
            title, brief = written.title, written.brief
            if copied(title, question, prompt):
                title = made.title
            if copied(brief, question, prompt):
                brief = made.brief
            return Facet(id=facet_id(number), title=title, brief=brief, values=values)

        return CoveragePlan(
            question=question,
            dimensions=tuple(
                Dimension(name=name, values=values)
                for name, values in dimensions
                if values
            ),
            facets=tuple(
                facet(n, f, values)
                for n, (f, values) in enumerate((f, v) for f, v in facets if v)
            ),
        )


HOLDINGS_HEADER = "What the knowledge base holds for it (name these by number):"


def copied(text: str, question: str, prompt: str) -> bool:
    """Whether `text` repeats the lead's prompt rather than saying its own.

    Echoed from the prompt or the holdings' header (`echoed`), or holding the
    header whole: a model that starts a title with it and goes on with items.
    """
    shown = f"{prompt}\n{HOLDINGS_HEADER}"
    return echoed(text, question, shown) or normalize(HOLDINGS_HEADER) in normalize(
        text
    )


def grounded(plan: CoveragePlan, corpus: CoveragePlan) -> CoveragePlan:
    """The corpus plan's values first, then those of a lead's ungrounded plan.

    A lead that planned from nothing ("Revenue: 20%, 10%") although it was
    shown what the knowledge base holds keeps its values, which the report
    shows covered or not, but cannot crowd out what is there.
    """
    if corpus.direct_answer:
        return plan
    ids = fresh_facet_ids([f.id for f in corpus.facets], len(plan.facets))
    merged = plan.model_copy(
        update={
            "dimensions": corpus.dimensions + plan.dimensions,
            "facets": corpus.facets
            + tuple(
                f.model_copy(update={"id": i})
                for f, i in zip(plan.facets, ids, strict=True)
            ),
        }
    )
    try:
        return lint_plan(merged)
    except PlanLintError:
        return corpus


def repair(plan: CoveragePlan, err: PlanLintError) -> CoveragePlan:
    """The plan less refused and unknown values; unowned values get own facets."""
    refused = set(err.refused)
    dimensions = []
    for d in plan.dimensions:
        kept = tuple(v for v in d.values if v not in refused)
        if kept and d.name not in refused:
            dimensions.append(Dimension(name=d.name, values=kept))
    values = {v for d in dimensions for v in d.values}
    facets = []
    for facet in plan.facets:
        kept = tuple(v for v in facet.values if v in values)
        if kept:
            facets.append(facet.model_copy(update={"values": kept}))
    owned = {v for f in facets for v in f.values}
    unowned = list(
        dict.fromkeys(v for d in dimensions for v in d.values if v not in owned)
    )
    facets += facets_for_values(plan.question, unowned, [f.id for f in facets])
    return plan.model_copy(
        update={"dimensions": tuple(dimensions), "facets": tuple(facets)}
    )


@dataclass(frozen=True)
class CorpusPlanner:
    """Extractive plan: the documents the question reaches are its values.

    A document counts only of the question's period, when it names years (see
    `KnowledgeBase.in_period`). A question that lists things is searched once
    for each (`reached_by_part`), the best document of each taken in turn. The
    most relevant documents are the values, one dimension for each kind they
    are of (`corpus_kinds`), so that the coverage table says which kinds a run
    reached. When one document stands out, its relevant sections are the
    values; when only one section does, the question is answered directly.
    A question whose words the knowledge base mostly does not know is refused
    (`check_matches`): the plan would be noise. (A lead model plans from the
    question instead, and its report shows what the knowledge base could
    verify.)
    """

    kb: KnowledgeBase
    max_facets: int

    async def plan(self, question: str) -> Planned:
        """Plan from the knowledge base, off the event loop."""
        return Planned(await asyncio.to_thread(self._plan, question))

    def holdings(self, question: str) -> Holdings:
        """What the knowledge base holds for `question`, for a lead to choose from.

        Twice as many values as a plan of its own would take; none for a
        question it does not know.
        """
        try:
            check_matches(self.kb, question)
        except NothingMatchesError:
            return Holdings()
        return holdings_for(self.kb, question, self.max_facets * 2)

    def _plan(self, question: str) -> CoveragePlan:
        check_matches(self.kb, question)
        rankings = reached_by_part(self.kb, question, self.max_facets * 4)
        relevant = interleaved(rankings)
        if not relevant:
            return CoveragePlan.direct(question, planned_by="corpus")
        if len(relevant) > 1:
            kinds = document_kinds(self.kb)
            chosen = interleaved(
                of_one_kind(kinds, ranking, self.max_facets) for ranking in rankings
            )[: self.max_facets]
            by_kind = titles_by_kind(self.kb, chosen, period_of(question))
            return corpus_plan(question, by_kind)
        sections = relevant_sections(self.kb, question, relevant[0])
        if len(sections) <= 1:
            return CoveragePlan.direct(question, planned_by="corpus")
        values = [f"{relevant[0].title}: {s}" for s in sections[: self.max_facets]]
        return corpus_plan(
            question, {f"sections of {relevant[0].title} the search matched": values}
        )


def of_one_kind(kinds: Kinds, ranked: list[Passage], n: int) -> list[Passage]:
    """The `n` best documents, those that stand apart in kind swapped out.

    An outlier of the first `n` (see `Kinds.core`) gives its place to the next
    document that agrees with the kind of the rest (`Kinds.agreeing`); with no
    such document left, it keeps its place, the most relevant outliers first.
    """
    first = ranked[:n]
    core = kinds.core([d.doc_id for d in first])
    outliers = [d for d in first if d.doc_id not in core]
    agreeing = set(kinds.agreeing([d.doc_id for d in ranked[n:]], core))
    spare = [d for d in ranked[n:] if d.doc_id in agreeing]
    swapped = spare[: len(outliers)]
    kept = [d for d in first if d.doc_id in core]
    chosen = kept + swapped + outliers[: len(outliers) - len(swapped)]
    return sorted(chosen, key=lambda d: d.score, reverse=True)


def corpus_plan(question: str, dimensions: dict[str, list[str]]) -> CoveragePlan:
    """A linted plan of these dimensions, each value a facet of its own.

    A value the lint would refuse (a title that is the question itself) is left
    out; with no value left, the question is answered directly.
    """
    names = list(dimensions)
    kept = {
        name: tuple(v for v in values if refusal(v, question, names, "") is None)
        for name, values in dimensions.items()
    }
    values = [v for vs in kept.values() for v in vs]
    if not values:
        return CoveragePlan.direct(question, planned_by="corpus")
    return lint_plan(
        CoveragePlan(
            question=question,
            dimensions=tuple(
                Dimension(name=n, values=vs) for n, vs in kept.items() if vs
            ),
            facets=facets_for_values(question, values),
            planned_by="corpus",
        )
    )


KNOWN_SHARE = 0.75
"""Share of a question's word weight the knowledge base must know to plan on it."""


class NothingMatchesError(QuestionError):
    """A question the knowledge base knows next to nothing about."""


def check_matches(kb: KnowledgeBase, question: str) -> None:
    """Refuse a question whose words the knowledge base mostly does not know.

    Each content word weighs its rarity (inverse document frequency; a word no
    passage holds weighs most). Relevance ranked against the best hit has no
    floor, so without this a question in another language or on a subject the
    corpus lacks would be planned on whatever it happened to reach. A question
    that leaves more than 1 - KNOWN_SHARE of its weight unknown is still
    planned when it is in the knowledge base's language, most of its words
    are known and no unknown one is a name it writes: a word or two the corpus
    lacks ("flopped", "setbacks") leaves the rest of the question to search
    on, a name it lacks ("a briefing on Zillennials") is its subject. A
    question scoped to a region (`in_scope`) that holds no document is refused
    too (`documents_in`): what it reaches elsewhere is not about it.
    """
    region = region_named(question)
    if region is not None and documents_in(kb, region) == frozenset():
        places = ", ".join(sorted(region.continents | region.countries))
        raise NothingMatchesError(
            f"nothing in the knowledge base matches {question!r}: no document is in"
            f" {places}"
        )
    words = [w for w in dict.fromkeys(terms(question)) if not w.isdigit()]
    frequencies = kb.document_frequencies(words)
    weight = {w: math.log(1 + kb.size / (1 + frequencies[w])) for w in words}
    unknown = [w for w in words if not frequencies[w]]
    if sum(weight[w] for w in unknown) <= (1 - KNOWN_SHARE) * sum(weight.values()):
        return
    why = f"no passage holds {', '.join(repr(w) for w in unknown)}"
    if 2 * len(unknown) < len(words) and not proper_names(question) & set(unknown):
        asked, held = language(question), kb_language(kb)
        if asked == held:
            return
        why = (
            f"the question reads as language '{asked}', the knowledge base as '{held}'"
        )
    raise NothingMatchesError(
        f"nothing in the knowledge base matches {question!r}: {why}"
    )


@dataclass(frozen=True)
class FallbackPlanner:
    """The lead plans; when no usable plan comes of it in time, the knowledge base does.

    The plan then says why (`CoveragePlan.fallback`), and what the lead's failed
    attempts cost is still counted. A lead that cannot be reached is not
    replaced: that is the run's failure to report. One that is reached but too
    slow costs only its plan, as a slow enumeration or summary costs only
    itself.
    """

    lead: ModelPlanner
    corpus: CorpusPlanner

    async def plan(self, question: str) -> Planned:
        """The lead's plan, else the corpus's, saying why."""
        try:
            return await self.lead.plan(question)
        except (ModelOutputError, ModelTimeoutError) as unusable:
            usage = (
                unusable.usage if isinstance(unusable, ModelOutputError) else Usage()
            )
            try:
                planned = await self.corpus.plan(question)
            except NothingMatchesError as refusal:
                raise ModelOutputError(
                    f"{describe(unusable)}; nor can the knowledge base plan it: "
                    f"{describe(refusal)}",
                    usage,
                ) from refusal
            why = f"the lead's plan could not be used ({describe(unusable)})"
            plan = planned.plan.model_copy(update={"fallback": why})
            return Planned(plan, usage)


def planner(
    model: BaseChatModel | None,
    kb: KnowledgeBase,
    *,
    max_facets: int,
    timeout_s: float,
) -> Planner:
    """The lead model's planner (the corpus's as its fallback), or the corpus's."""
    corpus = CorpusPlanner(kb, max_facets)
    if model is None:
        return corpus
    return FallbackPlanner(ModelPlanner(model, max_facets, timeout_s, corpus), corpus)
