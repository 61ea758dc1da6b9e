"""The coverage plan: dimensions a question spans and the facets that own them."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Annotated

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

    @classmethod
    def direct(cls, question: str) -> CoveragePlan:
        """The plan of a question the lead answers itself: no values to cover.

        The question itself is never a coverage value; the enumerators may
        still find values, which turn it into a delegated plan.
        """
        return cls(question=question, direct_answer=True)

    @property
    def values(self) -> tuple[str, ...]:
        """Every dimension value, in plan order, without repeats."""
        return tuple(dict.fromkeys(v for d in self.dimensions for v in d.values))

    def owner(self, value: str) -> Facet | None:
        """The facet that owns `value`, if any."""
        return next((f for f in self.facets if value in f.values), None)

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
    """A plan that cannot be sent: a value without owner, unknown, or a reused id."""

    def __init__(
        self, unowned: list[str], unknown: list[str], reused_ids: list[str]
    ) -> None:
        self.unowned = unowned
        self.unknown = unknown
        self.reused_ids = reused_ids
        parts = []
        if unowned:
            parts.append(f"values no facet owns: {', '.join(unowned)}")
        if unknown:
            parts.append(f"facet values in no dimension: {', '.join(unknown)}")
        if reused_ids:
            parts.append(f"facet ids used twice: {', '.join(reused_ids)}")
        super().__init__("; ".join(parts))


def lint_plan(plan: CoveragePlan) -> CoveragePlan:
    """Check a plan before anything is sent and merge overlapping facets.

    Every dimension value must be owned by a facet, every facet value must
    belong to a dimension, and no two facets may share an id; otherwise
    `PlanLintError` names the culprits. Facets that own a common value are
    merged into one, so no value is researched twice.
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
    if unowned or unknown or reused:
        raise PlanLintError(unowned, unknown, reused)
    return plan.model_copy(update={"facets": tuple(_merge_overlaps(plan.facets))})


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
                title=" / ".join(f.title for f in group),
                brief="\n".join(f.brief for f in group),
                values=tuple(dict.fromkeys(v for f in group for v in f.values)),
                agent_id=group[0].agent_id,
                acceptance=group[0].acceptance,
            )
        )
    return merged
