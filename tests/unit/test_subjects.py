"""A question that names a subject reaches documents that speak of it in other words."""

from __future__ import annotations

from pathlib import Path

import pytest

from roles.grounding import reached_by_subject
from runtime.subjects import subject_words, subjects_named
from runtime.text import terms
from tests.unit.test_regions import kb_of, titles_listed

TECHNOLOGY = "What technological breakthroughs made news in 2023?"


@pytest.mark.parametrize(
    ("question", "subjects"),
    [
        (
            "What scientific and technological breakthroughs made news in 2023?",
            ["science", "technology"],
        ),
        ("What were the major sporting competitions of 2022?", ["sports"]),
        ("Which storms and severe weather struck in 2022?", ["weather"]),
        ("Which films were released in 2022?", []),
        # a verb of a subject's list is no subject ("achieve" of achievement)
        ("Which teams stand out, and what did they achieve?", []),
    ],
)
def test_a_question_names_a_subject_by_its_name_or_a_word_that_begins_so(
    question: str, subjects: list[str]
) -> None:
    assert subjects_named(question) == subjects


def test_words_speak_of_a_subject_when_its_list_holds_them() -> None:
    text = terms("The spacecraft prototype flew; its software and sensors failed.")
    assert {"spacecraft", "prototype", "software"} <= subject_words("technology", text)
    assert not subject_words("technology", terms("A village by a river, with a mill."))


ROCKET = (
    "The Rocket Flight was the first flight, in 2023, of a spacecraft prototype "
    "whose software and sensor system failed at the launch site."
)
APP = "Chirp is an online messaging network, launched in 2023 as a mobile app."
VILLAGE = "Millford is a village by a river, with a mill. Its fair was held in 2023."
OLD_ROCKET = (
    "The Old Rocket was a spacecraft prototype whose software and sensor system "
    "failed in 1999."
)


def test_documents_that_never_say_the_subject_are_reached_by_its_words(
    tmp_path: Path,
) -> None:
    kb = kb_of(
        tmp_path,
        {
            "Rocket Flight": ROCKET,
            "Chirp": APP,
            "Millford": VILLAGE,
            "Old Rocket": OLD_ROCKET,
        },
    )
    # no document says "technological", "breakthroughs" or "news"
    assert not kb.search("technological breakthroughs made news", 10)
    (ranking,) = reached_by_subject(kb, TECHNOLOGY, 10)
    # of the question's period only, most of the subject's words first
    assert [p.title for p in ranking] == ["Rocket Flight", "Chirp"]
    # the lead is shown them; of no period, the old one too
    assert titles_listed(kb, "Which technological breakthroughs made news?") == {
        "Rocket Flight",
        "Old Rocket",
        "Chirp",
    }


def test_a_question_that_names_no_subject_has_no_ranking_by_one(
    tmp_path: Path,
) -> None:
    kb = kb_of(tmp_path, {"Rocket Flight": ROCKET, "Millford": VILLAGE})
    assert reached_by_subject(kb, "What happened in 2023?", 10) == []
