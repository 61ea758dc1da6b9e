"""The coverage plan: dimensions a question spans and the facets that own them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Dimension(BaseModel):
    """One axis a complete answer must span, with the values it takes."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    values: tuple[str, ...] = Field(min_length=1)


class Facet(BaseModel):
    """A unit of delegated work that owns some dimension values."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    brief: str = Field(min_length=1, description="What the subagent is asked to do.")
    covers: tuple[str, ...] = Field(
        min_length=1, description="Dimension values this facet owns."
    )
    agent_id: str = "researcher"
    acceptance: str = Field(
        default="At least one verified, quoted finding per covered value.",
        description="What a good answer for this facet holds.",
    )


def facet_for_value(question: str, value: str, taken: set[str]) -> Facet:
    """A facet of its own for one value, with an id not in `taken` (added to it)."""
    n = len(taken)
    while f"f{n}" in taken:
        n += 1
    taken.add(f"f{n}")
    return Facet(
        id=f"f{n}",
        title=value,
        brief=f"Find what the sources say about {value}, as it bears on: {question}",
        covers=(value,),
    )


class CoveragePlan(BaseModel):
    """The dispatch plan: what the answer must cover and who covers it."""

    model_config = ConfigDict(frozen=True)

    question: str
    dimensions: tuple[Dimension, ...] = ()
    facets: tuple[Facet, ...] = ()
    direct_answer: bool = Field(
        default=False, description="True when 1-2 direct calls answer the question."
    )

    @property
    def values(self) -> tuple[str, ...]:
        """Every dimension value, in plan order, without repeats."""
        return tuple(dict.fromkeys(v for d in self.dimensions for v in d.values))

    def owner(self, value: str) -> Facet | None:
        """The facet that owns `value`, if any."""
        return next((f for f in self.facets if value in f.covers), None)

    def extended(
        self, dimension: str, values: list[str], taken: set[str]
    ) -> CoveragePlan:
        """This plan with `values` added to `dimension`, each with its own facet."""
        if not values:
            return self
        dims = list(self.dimensions)
        at = next((i for i, d in enumerate(dims) if d.name == dimension), None)
        if at is None:
            dims.append(Dimension(name=dimension, values=tuple(values)))
        else:
            dims[at] = Dimension(name=dimension, values=(*dims[at].values, *values))
        facets = (
            *self.facets,
            *(facet_for_value(self.question, v, taken) for v in values),
        )
        return self.model_copy(update={"dimensions": tuple(dims), "facets": facets})


class PlanLintError(ValueError):
    """A plan that cannot be sent: some value has no owner or is unknown."""

    def __init__(self, unowned: list[str], unknown: list[str]) -> None:
        self.unowned = unowned
        self.unknown = unknown
        parts = []
        if unowned:
            parts.append(f"values no facet owns: {', '.join(unowned)}")
        if unknown:
            parts.append(f"facet values in no dimension: {', '.join(unknown)}")
        super().__init__("; ".join(parts))


def lint_plan(plan: CoveragePlan) -> CoveragePlan:
    """Check a plan before anything is sent and merge overlapping facets.

    Every dimension value must be owned by a facet and every facet value must
    belong to a dimension; otherwise `PlanLintError` names them. Facets that
    own a common value are merged into one, so no value is researched twice.
    """
    if plan.direct_answer:
        return plan
    known = set(plan.values)
    owned = {v for f in plan.facets for v in f.covers}
    unowned = [v for v in plan.values if v not in owned]
    unknown = list(
        dict.fromkeys(v for f in plan.facets for v in f.covers if v not in known)
    )
    if unowned or unknown:
        raise PlanLintError(unowned, unknown)
    return plan.model_copy(update={"facets": tuple(_merge_overlaps(plan.facets))})


def _merge_overlaps(facets: tuple[Facet, ...]) -> list[Facet]:
    merged: list[Facet] = []
    for facet in facets:
        overlapping = [m for m in merged if set(m.covers) & set(facet.covers)]
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
                covers=tuple(dict.fromkeys(v for f in group for v in f.covers)),
                agent_id=group[0].agent_id,
                acceptance=group[0].acceptance,
            )
        )
    return merged
