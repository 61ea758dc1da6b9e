"""Subjects a question names, and the documents whose leads speak of them.

A question that names a subject ("scientific and technological breakthroughs")
asks about documents that seldom say its word: a rocket's test flight is about
technology without the word "technology". Empath's lexicon (Fast et al., 2016)
lists, for each of its subjects, the words that text about it uses ("technology":
spacecraft, software, online, prototype, ...). A question names a subject by its
name ("sport" in "sporting") or by its adjective, a word of its list that begins
as the name does ("scientific" for science); a document speaks of it by as many
of the subject's words as its lead uses.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from empath import Empath

from runtime.text import stem, terms

_PREFIX = 5
"""Letters a subject's word shares with its name to name it ("scien")."""
_ADJECTIVE_ENDINGS = ("al", "ic", "ous")
"""How the adjective of a subject's name ends ("scientific", "political"): a
word of another kind ("achieve" of achievement) names no subject."""


@functools.cache
def _lexicon() -> Mapping[str, frozenset[str]]:
    """Each subject of one word, and the words of its list."""
    return {
        name: frozenset(words)
        for name, words in Empath().cats.items()
        if "_" not in name
    }


def subjects_named(question: str) -> list[str]:
    """The subjects the question names, in the order it names them."""
    named: dict[str, None] = {}
    for word in terms(question):
        for name, words in _lexicon().items():
            if stem(word) == stem(name) or (
                word in words
                and word[:_PREFIX] == name[:_PREFIX]
                and word.endswith(_ADJECTIVE_ENDINGS)
            ):
                named.setdefault(name)
    return list(named)


def subject_words(subject: str, words: Iterable[str]) -> frozenset[str]:
    """The words of `subject`'s list among `words` (a text's `terms`)."""
    return _lexicon()[subject] & frozenset(words)
