"""Breadth across kinds: a round citing one kind re-delegates to the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from roles.enumerate import kinds_reached
from runtime.kb import KnowledgeBase, ingest
from runtime.kinds import OTHERS, corpus_kinds
from tests.support import extractive, research

QUESTION = "Which entertainment releases of 2022 drew audiences?"


def film(title: str, lead: str) -> str:
    return (
        f"# {title}\n\n{title} is a 2022 {lead}, a drama film shot on location.\n\n"
        "## Plot\n\nA family keeps a secret until the harvest.\n\n"
        "## Cast\n\nSeveral actors star alongside newcomers.\n\n"
        "## Reception\n\nCritics praised the direction and the score.\n"
    )


def album(title: str) -> str:
    return (
        f"# {title}\n\n{title} is a studio album, a 2022 entertainment release "
        "that drew audiences to concert halls.\n\n"
        "## Recording\n\nThe band recorded in a barn over one winter.\n\n"
        "## Track listing\n\nTen songs, the longest eight minutes long.\n\n"
        "## Personnel\n\nFour musicians and a producer.\n"
    )


def series(title: str) -> str:
    return (
        f"# {title}\n\n{title} is a television series, a 2022 entertainment "
        "release that drew audiences to broadcast evenings.\n\n"
        "## Episodes\n\nEight episodes follow a town through a year.\n\n"
        "## Broadcast\n\nA public channel aired it weekly.\n\n"
        "## Ratings\n\nViewing figures rose each week.\n"
    )


def storm(title: str, lead: str = "flooded the coast") -> str:
    return (
        f"# {title}\n\n{title} was a 2022 windstorm with gusts that {lead}."
        "\n\n## Meteorological history\n\nA low deepened quickly.\n\n"
        "## Impact\n\nRoofs fell and ferries stopped.\n"
    )


def festival(title: str) -> str:
    return (
        f"# {title}\n\n{title} was a 2022 entertainment release that drew "
        "audiences to a lantern parade.\n\n## Route\n\nThe parade crossed "
        "three bridges.\n\n## Lanterns\n\nPaper lanterns lit the river.\n"
    )


# The films answer the question best: its words are in their leads twice over.
RELEASE = "entertainment release that drew audiences, the 2022 entertainment release"
FILMS = {"Harbor Lights", "Quiet Orchard", "Night Ferry"}
ALBUMS = {"Blue Static", "Copper Wires", "Glass Rooms"}
SERIES = {"Town Hall Hours", "Market Street", "Winter Lines"}
STORMS = {"Storm Ada", "Storm Bea", "Storm Cal"}
STRAY = "Storm Cal"
"""One storm's lead happens to hold the question's words."""
FESTIVAL = "Lantern Night"
"""A document of a kind of its own that the question is about."""


@pytest.fixture
def kinds_kb(tmp_path: Path) -> str:
    texts = {
        **{t: film(t, RELEASE) for t in FILMS},
        **{t: album(t) for t in ALBUMS},
        **{t: series(t) for t in SERIES},
        **{t: storm(t) for t in STORMS - {STRAY}},
        STRAY: storm(STRAY, "drew audiences to the 2022 entertainment release"),
        FESTIVAL: festival(FESTIVAL),
    }
    for title, text in texts.items():
        (tmp_path / f"{title.replace(' ', '_')}.md").write_text(text)
    path = tmp_path / "kb.sqlite"
    ingest(path, [tmp_path])
    return str(path)


def test_the_corpus_holds_three_kinds_of_release(kinds_kb: str) -> None:
    kinds = corpus_kinds(KnowledgeBase(kinds_kb))
    label = {title: kinds.of(doc_id(title)) for title in FILMS | ALBUMS | SERIES}
    assert len({label[t] for t in FILMS}) == 1
    assert len({label[t] for t in ALBUMS}) == 1
    assert len({label[t] for t in SERIES}) == 1
    assert len(set(label.values())) == 3


def test_a_question_is_about_a_kind_of_two_documents_or_of_its_only_one(
    kinds_kb: str,
) -> None:
    kb = KnowledgeBase(kinds_kb)
    kinds = corpus_kinds(kb)
    docs = kb.rank_documents(QUESTION, 50)
    reached = kinds_reached(kb, QUESTION, docs, kinds)
    assert kinds.of(doc_id(FESTIVAL)) == OTHERS
    assert reached == {
        kinds.key(doc_id(t))
        for t in ("Harbor Lights", "Blue Static", "Market Street", FESTIVAL)
    }
    # One storm of three whose lead holds the question's words is a stray match.
    assert kinds.key(doc_id(STRAY)) not in reached


def doc_id(title: str) -> str:
    return title.replace(" ", "_")


def test_a_round_that_cites_one_kind_redelegates_to_the_other_two(
    kinds_kb: str,
) -> None:
    state = research(QUESTION, extractive(kinds_kb, max_subagents=3))
    by_round: dict[int, set[str]] = {}
    for result in state["results"].values():
        by_round.setdefault(result.round, set()).update(result.values)
    assert by_round[0] == FILMS
    later = set().union(*(values for n, values in by_round.items() if n > 0))
    assert later & ALBUMS
    assert later & SERIES
    assert not later & STORMS
    assert FESTIVAL in later
    cited = {f.source.title for f in state["findings"] if f.verified}
    assert cited & ALBUMS and cited & SERIES and cited & FILMS


def test_a_question_that_lists_three_kinds_plans_each_in_its_first_round(
    kinds_kb: str,
) -> None:
    def first_round(question: str) -> set[str]:
        state = research(question, extractive(kinds_kb, max_subagents=3))
        return {
            value
            for result in state["results"].values()
            if result.round == 0
            for value in result.values
        }

    listed = "Which films, albums and television series of 2022 drew audiences?"
    assert {len(first_round(listed) & kind) for kind in (FILMS, ALBUMS, SERIES)} == {1}
    # Asked as one query, the films alone fill the first round.
    assert first_round(QUESTION) == FILMS
