"""A person's review of a plan: accept it, edit its facets, or add values."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from state.plan import CoveragePlan, Dimension, Facet, lint_plan

ADDED_BY_A_PERSON = "added by a person"
"""The dimension of values an edit's facets name that no dimension holds."""


class PlanReview(BaseModel):
    """What a person answers to a plan.

    accept keeps it; edit replaces its facets (values they name that no
    dimension holds are added, values no facet owns any more are dropped);
    add puts new values into dimensions, each with a facet of its own.
    """

    model_config = ConfigDict(frozen=True)

    action: Literal["accept", "edit", "add"]
    facets: tuple[Facet, ...] = ()
    values: dict[str, list[str]] = Field(default_factory=dict)


class PlanReviewError(ValueError):
    """A review that is not one, or a plan it would break."""


def read_review(value: Any) -> PlanReview:
    """A review from a resume value: "accept" or a JSON object."""
    if isinstance(value, str):
        value = {"action": value.strip().lower()}
    try:
        review = PlanReview.model_validate(value)
    except ValidationError as err:
        raise PlanReviewError(
            'not a plan review: answer \'accept\', {"action": "edit", '
            '"facets": [...]} or {"action": "add", "values": {"dimension": '
            f"[...]}}}} ({err.error_count()} problem(s): "
            f"{err.errors()[0]['msg']})"
        ) from err
    if review.action == "edit" and not review.facets:
        raise PlanReviewError("an edit needs the facets to keep")
    if review.action == "add" and not any(review.values.values()):
        raise PlanReviewError("an addition needs values")
    return review


def reviewed(plan: CoveragePlan, review: PlanReview) -> CoveragePlan:
    """The plan after the review, linted like any plan."""
    if review.action == "accept":
        return plan
    if review.action == "add":
        for dimension, values in review.values.items():
            fresh = [v for v in dict.fromkeys(values) if v not in plan.values]
            plan = plan.extended(dimension, fresh)
        return _linted(plan)
    owned = list(dict.fromkeys(v for f in review.facets for v in f.values))
    dimensions = [
        Dimension(name=d.name, values=kept)
        for d in plan.dimensions
        if (kept := tuple(v for v in d.values if v in owned))
    ]
    named = {v for d in dimensions for v in d.values}
    if extra := tuple(v for v in owned if v not in named):
        dimensions.append(Dimension(name=ADDED_BY_A_PERSON, values=extra))
    edited = plan.model_copy(
        update={
            "dimensions": tuple(dimensions),
            "facets": review.facets,
            "direct_answer": False,
        }
    )
    return _linted(edited)


def _linted(plan: CoveragePlan) -> CoveragePlan:
    try:
        return lint_plan(plan)
    except ValueError as err:
        raise PlanReviewError(f"the reviewed plan does not hold: {err}") from err
