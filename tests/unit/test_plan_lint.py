from __future__ import annotations

import pytest

from state.plan import CoveragePlan, Dimension, Facet, PlanLintError, lint_plan, spread


def facet(fid: str, *covers: str) -> Facet:
    return Facet(id=fid, title=fid, brief=f"research {fid}", values=covers)


def plan(*facets: Facet, values: tuple[str, ...] = ("a", "b", "c")) -> CoveragePlan:
    return CoveragePlan(
        question="q", dimensions=(Dimension(name="d", values=values),), facets=facets
    )


def test_unowned_value_is_rejected() -> None:
    with pytest.raises(PlanLintError) as err:
        lint_plan(plan(facet("f1", "a"), facet("f2", "b")))
    assert err.value.unowned == ["c"]
    assert "c" in str(err.value)


def test_value_outside_every_dimension_is_rejected() -> None:
    with pytest.raises(PlanLintError) as err:
        lint_plan(plan(facet("f1", "a", "b", "c", "z")))
    assert err.value.unknown == ["z"]


def test_overlapping_facets_are_merged() -> None:
    linted = lint_plan(plan(facet("f1", "a", "b"), facet("f2", "b", "c")))
    assert len(linted.facets) == 1
    assert linted.facets[0].values == ("a", "b", "c")
    assert linted.facets[0].id == "f1"
    assert linted.facets[0].title == "f1 / f2"
    alike = [
        f.model_copy(update={"title": "Finals"})
        for f in (facet("f1", "a", "b"), facet("f2", "b", "c"), facet("f3", "c"))
    ]
    assert lint_plan(plan(*alike)).facets[0].title == "Finals"  # said once


def test_overlap_merges_transitively_and_keeps_disjoint_facets() -> None:
    linted = lint_plan(
        plan(
            facet("f1", "a"),
            facet("f2", "b"),
            facet("f3", "a", "b"),
            facet("f4", "c"),
            values=("a", "b", "c"),
        )
    )
    assert sorted(f.values for f in linted.facets) == [("a", "b"), ("c",)]
    owners = [v for f in linted.facets for v in f.values]
    assert len(owners) == len(set(owners))


def test_clean_plan_passes_unchanged() -> None:
    clean = plan(facet("f1", "a"), facet("f2", "b", "c"))
    assert lint_plan(clean) == clean


def test_values_that_are_no_values_are_refused() -> None:
    question = "How did music change in 2022?"
    shown = "A dimension is one way in which a complete answer must vary."
    bad = CoveragePlan(
        question=question,
        dimensions=(
            Dimension(name="genre", values=("pop", "Genre", "era")),
            Dimension(name="era", values=("2022", "how did music change in 2022")),
            Dimension(name="extra", values=("complete answer", "music change")),
            Dimension(name="film scores", values=("Film scores: 2022 US", "scores")),
        ),
        facets=(
            facet("f0", "pop", "Genre", "era", "2022"),
            facet("f1", "how did music change in 2022"),
            facet("f2", "complete answer", "music change"),
            facet("f3", "Film scores: 2022 US", "scores"),
        ),
    )
    with pytest.raises(PlanLintError) as err:
        lint_plan(bad, shown)
    assert set(err.value.refused) == {
        "Genre",
        "era",
        "how did music change in 2022",
        "complete answer",
        "Film scores: 2022 US",  # a name of several words, copied with a value
    }
    assert "the question itself" in str(err.value)
    assert "copied from the prompt" in str(err.value)


def test_spread_splits_the_widest_facets_while_there_is_room() -> None:
    wide = plan(facet("f0", "a", "b", "c"), values=("a", "b", "c"))
    spread_out = spread(wide, 5)
    assert [f.values for f in spread_out.facets] == [("a",), ("b",), ("c",)]
    title = wide.facets[0].title
    assert [f.title for f in spread_out.facets] == [f"{title} ({v})" for v in "abc"]
    assert len({f.id for f in spread_out.facets}) == 3
    assert lint_plan(spread_out) == spread_out
    assert [f.values for f in spread(wide, 2).facets] == [("a",), ("b", "c")]
    assert spread(wide, 1) == wide
