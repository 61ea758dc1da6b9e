"""The language a text is written in, and the language of a knowledge base.

Language identification is py3langid's (a naive Bayes model over byte n-grams
of 97 languages, shipped inside the package). It tells a question in another
language from one in the knowledge base's language that uses a word the
knowledge base lacks: both leave words unknown, only one is noise to search.
"""

from __future__ import annotations

import functools
from typing import Any

from runtime.kb import KnowledgeBase

LEADS_READ = 200
"""Leads whose opening a knowledge base's language is told from."""
LEAD_CHARS = 300
"""Characters of each lead read."""


def language(text: str) -> str:
    """The ISO 639-1 code of the language `text` is most likely written in."""
    code, _ = _identifier().classify(text)
    return str(code)


def kb_language(kb: KnowledgeBase) -> str:
    """The language of `kb`'s documents, told from their leads' openings."""
    return _kb_language(kb, kb.version())


@functools.lru_cache(maxsize=8)
def _kb_language(kb: KnowledgeBase, version: tuple[int, int, int, int]) -> str:
    leads = [text for _, first, _, text in kb.lead_and_sections() if first]
    return language("\n".join(lead[:LEAD_CHARS] for lead in leads[:LEADS_READ]))


@functools.cache
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE)
