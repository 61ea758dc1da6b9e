"""The things a question lists, and a query for each."""

from __future__ import annotations

import pytest

from runtime.listed import listed_items, part_queries


@pytest.mark.parametrize(
    ("question", "items"),
    [
        (
            "Which films, albums and television series were released in 2022?",
            ["films", "albums", "television series"],
        ),
        (
            "Which medical conditions, public health and social problems have drawn"
            " notice?",
            ["medical conditions", "public health", "social problems"],
        ),
        ("Which cities, towns or rivers?", ["cities", "towns", "rivers"]),
        # The last item ends one word past the longest other one.
        (
            "Which lakes, rivers or seas matter most?",
            ["lakes", "rivers", "seas matter"],
        ),
        # Two items joined by "and" are a list; numbers are not things.
        ("Which storms and floods struck?", ["storms", "floods struck"]),
        ("Who won in 2022 and 2023, and how?", []),
        ("How did the entertainment industry look?", []),
        # A run of more than three words before the comma is no item.
        ("Which big old stone bridges, roads and tunnels last?", []),
    ],
)
def test_listed_items(question: str, items: list[str]) -> None:
    assert [" ".join(i) for i in listed_items(question)] == items


def test_each_listed_thing_is_asked_with_the_questions_years() -> None:
    assert part_queries("Which films, albums and plays of 2022 and 2023 won?") == [
        "films 2022 2023",
        "albums 2022 2023",
        "plays 2022 2023",
    ]


def test_a_question_of_fewer_than_three_things_is_asked_whole() -> None:
    question = "Which natural disasters and severe weather events struck in 2022?"
    assert part_queries(question) == [question]


def test_an_item_listed_twice_is_asked_once() -> None:
    assert part_queries("Which films, plays, films and songs?") == [
        "films",
        "plays",
        "songs",
    ]
