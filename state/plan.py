"""The coverage plan: dimensions a question spans and the facets that own them."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""A string with something in it besides white space."""

DEFAULT_AGENT = "researcher"
"""The agent a facet gets when its plan names none, or one that does not exist."""
LEAD_AGENT = "lead"
"""The agent id of work the coordinator does itself (a direct answer)."""
DIRECT_FACET = "direct"


class Dimension(BaseModel):
    """One axis a complete answer must span, with the values it takes."""

    model_config = ConfigDict(frozen=True)

    name: Text
    values: tuple[Text, ...] = Field(min_length=1)


class Facet(BaseModel):
    """A unit of delegated work that owns some dimension values."""

    model_config = ConfigDict(frozen=True)

    id: Text
    title: Text
    brief: Text = Field(description="What the subagent is asked to do.")
    values: tuple[Text, ...] = Field(
        min_length=1, description="Dimension values this facet owns."
    )
    agent_id: Text = DEFAULT_AGENT
    acceptance: Text = Field(
        default="At least one verified, quoted finding per covered value.",
        description="What a good answer for this facet holds.",
    )


def facet_id(n: int) -> str:
    """The id of the plan's `n`-th facet: facets are numbered by code, not models."""
    return f"f{n}"


def fresh_facet_ids(taken: Iterable[str], count: int) -> list[str]:
    """`count` facet ids, numbered on from the ones `taken`, none among them."""
    used = set(taken)
    numbers = itertools.count(len(used))
    fresh = (facet_id(n) for n in numbers if facet_id(n) not in used)
    return list(itertools.islice(fresh, count))


def facets_for_values(
    question: str, values: Sequence[str], taken: Iterable[str] = ()
) -> tuple[Facet, ...]:
    """A facet of its own for each value, with ids not among `taken`."""
    return tuple(
        Facet(
            id=fid,
            title=value,
            brief=f"Find what the sources say about {value}, as it bears on: "
            f"{question}",
            values=(value,),
        )
        for fid, value in zip(fresh_facet_ids(taken, len(values)), values, strict=True)
    )


class CoveragePlan(BaseModel):
    """The dispatch plan: what the answer must cover and who covers it."""

    model_config = ConfigDict(frozen=True)

    question: str
    dimensions: tuple[Dimension, ...] = ()
    facets: tuple[Facet, ...] = ()
    direct_answer: bool = Field(
        default=False,
        description="True when 1-2 direct calls answer the question; such a plan "
        "has no values until an enumeration finds some.",
    )
    planned_by: Literal["lead", "corpus"] = Field(
        default="lead",
        description="Who named the values: the lead model, from the question, or "
        "the corpus planner, from what the search matched (extractive mode).",
    )
    fallback: str = Field(
        default="",
        description="Why the corpus planned although a lead model was given: "
        "the lead's plan could not be used.",
    )

    @classmethod
    def direct(
        cls, question: str, planned_by: Literal["lead", "corpus"] = "lead"
    ) -> CoveragePlan:
        """The plan of a question the lead answers itself: no values to cover.

        The question itself is never a coverage value; the enumerators may
        still find values, which turn it into a delegated plan.
        """
        return cls(question=question, direct_answer=True, planned_by=planned_by)

    @property
    def values(self) -> tuple[str, ...]:
        """Every dimension value, in plan order, without repeats."""
        return tuple(dict.fromkeys(v for d in self.dimensions for v in d.values))

    def owners(self) -> dict[str, Facet]:
        """The facet that owns each value: build once, then look values up."""
        owners: dict[str, Facet] = {}
        for facet in self.facets:
            for value in facet.values:
                owners.setdefault(value, facet)
        return owners

    def extended(self, dimension: str, values: Sequence[str]) -> CoveragePlan:
        """This plan with `values` added to `dimension`, each with its own facet."""
        if not values:
            return self
        dims = list(self.dimensions)
        at = next((i for i, d in enumerate(dims) if d.name == dimension), None)
        if at is None:
            dims.append(Dimension(name=dimension, values=tuple(values)))
        else:
            dims[at] = Dimension(name=dimension, values=(*dims[at].values, *values))
        taken = [f.id for f in self.facets]
        facets = (*self.facets, *facets_for_values(self.question, values, taken))
        return self.model_copy(
            update={"dimensions": tuple(dims), "facets": facets, "direct_answer": False}
        )


class PlanLintError(ValueError):
    """A plan that cannot be sent, with the culprits of each problem.

    Attributes:
        unowned: Values no facet owns.
        unknown: Facet values that no dimension names.
        reused_ids: Facet ids used twice.
        refused: Values (or dimension names) that are no values, with why: the
            question itself, a dimension's own name, or text of the prompt.
    """

    def __init__(
        self,
        unowned: list[str],
        unknown: list[str],
        reused_ids: list[str],
        refused: dict[str, str],
    ) -> None:
        self.unowned = unowned
        self.unknown = unknown
        self.reused_ids = reused_ids
        self.refused = refused
        parts = []
        if unowned:
            parts.append(f"values no facet owns: {', '.join(unowned)}")
        if unknown:
            parts.append(f"facet values in no dimension: {', '.join(unknown)}")
        if reused_ids:
            parts.append(f"facet ids used twice: {', '.join(reused_ids)}")
        parts += [f"{value!r} is {why}" for value, why in refused.items()]
        super().__init__("; ".join(parts))


ECHO_MIN_WORDS = 2
"""Shortest text that counts as echoed from the prompt: single words recur."""


def refused_values(plan: CoveragePlan, shown: str = "") -> dict[str, str]:
    """Values and dimension names that are not values of the question, with why.

    A value equal to the question, a value that repeats its own or another
    dimension's name, and text copied from what the model was `shown` (the
    prompt and the schema) but absent from the question are refused.
    """
    names = {d.name for d in plan.dimensions}
    refused: dict[str, str] = {}
    for dimension in plan.dimensions:
        if echoed(dimension.name, plan.question, shown):
            refused[dimension.name] = "a dimension name copied from the prompt"
        for value in dimension.values:
            why = refusal(value, plan.question, names, shown)
            if why:
                refused[value] = why
    return refused


def refusal(
    value: str, question: str, dimension_names: Iterable[str], shown: str
) -> str | None:
    """Why `value` is no value of the question, or None if it may be one."""
    if normalize(value) == normalize(question):
        return "the question itself, not one of its values"
    if any(named(n, value) for n in dimension_names):
        return "a dimension's name, not one of its values"
    if echoed(value, question, shown):
        return "text copied from the prompt, not from the question"
    return None


def named(name: str, value: str) -> bool:
    """Whether `value` is a dimension's `name`, or holds a name of several words.

    A model that lists a dimension's values may copy its name with one of
    them ("Documents with sections History, Geography: 2022 US").
    """
    name, value = normalize(name), normalize(value)
    whole = len(name.split()) >= ECHO_MIN_WORDS and f" {name} " in f" {value} "
    return name == value or whole


def echoed(text: str, question: str, shown: str) -> bool:
    """Whether `text` was copied from what a model was `shown`, not the question."""
    words = normalize(text)
    long_enough = len(words.split()) >= ECHO_MIN_WORDS
    return (
        long_enough and words in normalize(shown) and words not in normalize(question)
    )


def named_item(named: int | str, items: Sequence[str]) -> str | None:
    """The item of `items` a model named: by its number (from 1) or as spelled.

    A number names an item only within range: written as words, one out of
    range (a year) is read as words and names an item only if one is spelled
    so. None when it names none.
    """
    if isinstance(named, int):
        return items[named - 1] if 1 <= named <= len(items) else None
    if named.strip().isdigit() and 1 <= int(named) <= len(items):
        return items[int(named) - 1]
    spelled = {normalize(item): item for item in items}
    return spelled.get(normalize(named))


def normalize(text: str) -> str:
    """Case, punctuation and spacing folded, to compare what a model wrote."""
    return " ".join(re.findall(r"[^\W_]+", text.casefold()))


def lint_plan(plan: CoveragePlan, shown: str = "") -> CoveragePlan:
    """Check a plan before anything is sent and merge overlapping facets.

    Every dimension value must be owned by a facet, every facet value must
    belong to a dimension, no two facets may share an id, and no value may be
    refused by `refused_values` (`shown` is what the model that wrote the
    plan was shown); otherwise `PlanLintError` names the culprits. Facets that
    own a common value are merged into one, so no value is researched twice.
    """
    if plan.direct_answer:
        return plan
    known = set(plan.values)
    owned = {v for f in plan.facets for v in f.values}
    unowned = [v for v in plan.values if v not in owned]
    unknown = list(
        dict.fromkeys(v for f in plan.facets for v in f.values if v not in known)
    )
    ids = [f.id for f in plan.facets]
    reused = list(dict.fromkeys(i for i in ids if ids.count(i) > 1))
    refused = refused_values(plan, shown)
    if unowned or unknown or reused or refused:
        raise PlanLintError(unowned, unknown, reused, refused)
    return plan.model_copy(update={"facets": tuple(_merge_overlaps(plan.facets))})


def spread(plan: CoveragePlan, max_facets: int) -> CoveragePlan:
    """The plan with its values spread over up to `max_facets` facets.

    While there is room, the facet owning most values is split in two. A
    narrow task is one a subagent can finish, and the halves run in parallel.
    """
    facets = list(plan.facets)
    while len(facets) < max_facets:
        widest = max(facets, key=lambda f: len(f.values), default=None)
        if widest is None or len(widest.values) < 2:
            break
        half = len(widest.values) // 2
        (fid,) = fresh_facet_ids([f.id for f in facets], 1)
        parts = [(widest.id, widest.values[:half]), (fid, widest.values[half:])]
        at = facets.index(widest)
        # a half split again names its own values, not its parent's as well
        title = widest.title.removesuffix(f" ({', '.join(widest.values)})")
        facets[at : at + 1] = [
            widest.model_copy(
                update={
                    "id": part_id,
                    "title": f"{title} ({', '.join(values)})",
                    "values": values,
                }
            )
            for part_id, values in parts
        ]
    return plan.model_copy(update={"facets": tuple(facets)})


def _merge_overlaps(facets: tuple[Facet, ...]) -> list[Facet]:
    merged: list[Facet] = []
    for facet in facets:
        overlapping = [m for m in merged if set(m.values) & set(facet.values)]
        for m in overlapping:
            merged.remove(m)
        group = [*overlapping, facet]
        if len(group) == 1:
            merged.append(facet)
            continue
        merged.append(
            Facet(
                id=group[0].id,
                title=" / ".join(dict.fromkeys(f.title for f in group)),
                brief="\n".join(dict.fromkeys(f.brief for f in group)),
                values=tuple(dict.fromkeys(v for f in group for v in f.values)),
                agent_id=group[0].agent_id,
                acceptance=group[0].acceptance,
            )
        )
    return merged
