"""The things a question lists: "films, albums and television series".

A question that lists what it asks about spans each item of the list; asked as
one query, a search ranks the documents that match several items (or the
commonest) first and the rest fall below its relevance floor. `part_queries`
asks the question once for each listed thing instead.
"""

from __future__ import annotations

import re

from runtime.text import STOPWORDS, WORD, years

_TOKEN = re.compile(rf"{WORD.pattern}|[^\w\s]")
_JOINERS = frozenset({"and", "or"})
_MAX_ITEM = 3
"""Words of a listed item, at most."""
MIN_ITEMS = 3
"""Items of a list that enumerates things: two joined by "and" often name one
thing twice ("natural disasters and severe weather events")."""


def _content(token: str) -> bool:
    return (
        token[0].isalnum()
        and token.casefold() not in STOPWORDS
        and (not token.isdigit())
    )


def listed_items(question: str) -> list[list[str]]:
    """The items of the first list the question writes, each as its words.

    A list is two or more items joined by commas and a last "and" or "or",
    the first after neither a word of an item nor a comma; an item is one to
    three words that are neither stopwords nor numbers ("2022 and 2023" lists
    no things). The last item ends at a stopword or one word past the longest
    other item. None when the question lists nothing.
    """
    tokens = [m.group() for m in _TOKEN.finditer(question)]
    for start in range(len(tokens)):
        items = _list_from(tokens, start)
        if items:
            return items
    return []


def _list_from(tokens: list[str], start: int) -> list[list[str]]:
    """The list whose first item starts at `tokens[start]`, if one does."""
    if start and (_content(tokens[start - 1]) or tokens[start - 1] == ","):
        return []
    items: list[list[str]] = []
    at = start
    while True:
        item: list[str] = []
        while at < len(tokens) and _content(tokens[at]) and len(item) < _MAX_ITEM:
            item.append(tokens[at])
            at += 1
        if not item:
            return []
        items.append(item)
        if at < len(tokens) and tokens[at] == ",":
            at += 1
        if at < len(tokens) and tokens[at].casefold() in _JOINERS:
            last: list[str] = []
            cap = max(map(len, items)) + 1
            at += 1
            while at < len(tokens) and _content(tokens[at]) and len(last) < cap:
                last.append(tokens[at])
                at += 1
            return [*items, last] if last else []
        if at >= len(tokens) or not _content(tokens[at]) or tokens[at - 1] != ",":
            return []


def part_queries(question: str) -> list[str]:
    """A query for each thing the question lists; the question alone if none.

    Each is the item's words and the years the question names (its period):
    the rest of the question ("how were they received") is asked of every
    item alike, and would rank the same documents first for each. An item
    listed twice is asked once.
    """
    items = listed_items(question)
    if len(items) < MIN_ITEMS:
        return [question]
    period = " ".join(sorted(years(question)))
    queries = (" ".join([*item, period]).strip() for item in items)
    return list(dict.fromkeys(queries))
