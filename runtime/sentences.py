"""Sentences: the one splitter of evidence text.

A subagent sees evidence as numbered sentences, the extractive reader quotes
whole sentences, ingest packs long paragraphs sentence by sentence, and
verification reads the sentences that hold a quote: all of them cut text here,
so sentence 3 of a passage is the same words wherever it is named.
"""

from __future__ import annotations

import re

_CLOSERS = "\"'’”)\\]"
_OPENERS = "\"“‘'(\\["
_BOUNDARY = re.compile(
    rf"(?<=[.!?])(?<!\b[A-Z]\.)\s+(?=[{_OPENERS}]?[A-Z0-9])"
    rf"|(?<=[.!?][{_CLOSERS}])\s+(?=[{_OPENERS}]?[A-Z0-9])"
    r"|\n+"
)
_ENDS_SENTENCE = re.compile(rf"[.!?][{_CLOSERS}]*\s*$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each sentence of `text` starts and ends, blank ones left out.

    A sentence ends at a full stop, question or exclamation mark (and any
    closing quote or bracket) followed by a capital or a digit, but not at an
    initial ("J. Smith", "U.S. Army"), or at a line break. Each span is
    trimmed of surrounding whitespace.
    """
    spans = []
    start = 0
    for boundary in (*_BOUNDARY.finditer(text), None):
        end = boundary.start() if boundary else len(text)
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + len(piece.rstrip())))
        if boundary:
            start = boundary.end()
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of `text`, each verbatim."""
    return [text[a:b] for a, b in sentence_spans(text)]


def ends_sentence(line: str) -> bool:
    """Whether a line ends where a sentence does."""
    return bool(_ENDS_SENTENCE.search(line))
