"""Text analysis: the one home of words and sentences.

Content words (`terms`, `stems`), the years and numbers a text names, its
negations, and the one sentence splitter of evidence text. A subagent sees
evidence as numbered sentences, the extractive reader quotes whole sentences,
ingest packs long paragraphs sentence by sentence, and verification reads the
sentences that hold a quote: all of them cut text here, so sentence 3 of a
passage is the same words wherever it is named.
"""

from __future__ import annotations

import re

from state.plan import normalize

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
"""A word: letters and digits, with an inner apostrophe ("don't", "O’Brien")."""
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because
    been before being below between both but by can could did do does doing down during
    each few for from further had has have having he her here hers him his how i if in
    into is it its itself just me more most my no nor not now of off on once only or
    other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your each did cause caused
    which whose many much may might must shall yet get got make made one two""".split()
)
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")
_SPAN = re.compile(
    r"(?i)\b(?:(?:between|from)\s+(1[5-9]\d\d|2[01]\d\d)\s+(?:and|to|until|through)"
    r"|(1[5-9]\d\d|2[01]\d\d)\s*[-\u2013\u2014]|(1[5-9]\d\d|2[01]\d\d)\s+to)"
    r"\s*(1[5-9]\d\d|2[01]\d\d)\b"
)
_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_INITIALISM = re.compile(r"(?<!\w)[^\W\d_](?:\.[^\W\d_])+\.?(?!\w)")
NEGATIONS = frozenset(
    "no not never none nor neither nobody nothing nowhere without cannot".split()
)

_CLOSERS = "\"'’”)\\]"
_OPENERS = "\"“‘'(\\["
_BOUNDARY = re.compile(
    rf"(?<=[.!?])(?<!\b[A-Z]\.)(?<!\b[a-z]\.[a-z]\.)\s+(?=[{_OPENERS}]?[A-Z0-9])"
    rf"|(?<=[.!?][{_CLOSERS}])\s+(?=[{_OPENERS}]?[A-Z0-9])"
    r"|\n+"
)
_ENDS_SENTENCE = re.compile(rf"[.!?][{_CLOSERS}]*\s*$")
_CITED_BOUNDARY = re.compile(
    r"(?<![\s.][A-Z]\.)(?<=[.!?])((?:\s*\[\d+\])*)\s+(?=[A-Z\"“(])"
)
"""Where a written sentence ends: after its stop and the [n] markers after it."""
_WRITTEN_END = re.compile(rf"[.!?][{_CLOSERS}]*(?:\s*\[\d+\])*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each sentence of `text` starts and ends, blank ones left out.

    A sentence ends at a full stop, question or exclamation mark (and any
    closing quote or bracket) followed by a capital or a digit, but not at an
    initial ("J. Smith", "U.S. Army") or a lower-case abbreviation of two
    letters ("8:43 a.m. (PHT)", "e.g. Paris"), or at a line break. Each span is
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


def cited_sentences(paragraph: str) -> list[str]:
    """The sentences of written prose, each with the citation markers it ends with.

    A writer puts "[2]" after a sentence's stop; the marker belongs to the
    sentence before it, which the evidence splitter would not know.
    """
    found, start = [], 0
    for boundary in _CITED_BOUNDARY.finditer(paragraph):
        found.append(paragraph[start : boundary.end(1)])
        start = boundary.end()
    found.append(paragraph[start:])
    return [s.strip() for s in found if s.strip()]


def whole_sentences(prose: str) -> str:
    """Written prose up to its last sentence's end (and the [n] markers after it).

    What a length limit cut off mid-sentence is left out.
    """
    ends = [m.end() for m in _WRITTEN_END.finditer(prose)]
    return prose[: ends[-1]] if ends else ""


def ends_sentence(line: str) -> bool:
    """Whether a line ends where a sentence does."""
    return bool(_ENDS_SENTENCE.search(line))


def terms(text: str) -> list[str]:
    """Content words of `text`: lower-cased, stopwords and single letters dropped."""
    return [
        w
        for w in (m.group().casefold() for m in WORD.finditer(text))
        if len(w) > 1 and w not in STOPWORDS
    ]


def keywords(text: str) -> list[str]:
    """What a search for `text` looks for.

    Its content words (`terms`), and each initialism written with full stops
    ("E.A.T.") as its letters in a row ("e a t"), as the index holds it.
    """
    initialisms = (m.replace(".", "") for m in _INITIALISM.findall(text))
    return [*terms(text), *(" ".join(letters).casefold() for letters in initialisms)]


def other_number(word: str) -> str | None:
    """The other number of a word in -sis or -ses, as Greek nouns form it, else None.

    The index's Porter stemmer keeps "crisis" and "crises" apart ("crisi",
    "crise"), as it does every such Greek noun; a search for one looks for
    both. Of other words the form is a guess that matches nothing ("houses",
    "housis"). Words of five letters or fewer are left alone ("bases", "basis").
    """
    if len(word) > 5 and word.endswith(("sis", "ses")):
        return word[:-2] + ("es" if word.endswith("is") else "is")
    return None


def stem(word: str) -> str:
    """A light suffix-stripping stem, to match 'disasters' with 'disaster'."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def stems(text: str) -> set[str]:
    """The stemmed content words of `text`."""
    return {stem(t) for t in terms(text)}


def years(text: str) -> set[str]:
    """The years (1500-2199) a text names."""
    return set(_YEAR.findall(text))


def period_of(question: str) -> set[str]:
    """The years a question is about: those it names, and every year of a span.

    A span is written "between 2019 and 2022", "from 2019 to 2022", "2019-2022"
    or "2019 to 2022".
    """
    named = years(question)
    for *starts, end in _SPAN.findall(question):
        first, last = int("".join(starts)), int(end)
        named |= {str(y) for y in range(first, last + 1)}
    return named


def numbers(text: str) -> set[str]:
    """The numbers written in `text`, thousands separators removed."""
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` without control characters: no terminal escape sequence survives."""
    return _CONTROL.sub("", text)


def proper_names(text: str) -> set[str]:
    """The names `text` writes: capitalised words past the first of a sentence.

    Casefolded; a stopword ("The" after a colon) is no name. A sentence's first
    word is left out: its capital says nothing.
    """
    found: set[str] = set()
    for sentence in sentences(text):
        for match in list(WORD.finditer(sentence))[1:]:
            word = match.group()
            if word[0].isupper() and word.casefold() not in STOPWORDS:
                found.add(word.casefold())
    return found


def negations(text: str) -> set[str]:
    """The negating words of `text` ("not", "never", "didn't")."""
    words = {w.casefold() for w in WORD.findall(text)}
    return {w for w in words if w in NEGATIONS or w.endswith(("n't", "n’t"))}


def names(value: str, text: str) -> bool:
    """Whether `text` names `value`.

    All of the value's content words must be there, and its acronyms as
    written ("US" is not "us"); a value of no content words ("Other") must be
    there as a phrase.
    """
    wanted = stems(value)
    if not wanted:
        phrase = normalize(value)
        return bool(phrase) and f" {phrase} " in f" {normalize(text)} "
    if not wanted <= stems(text):
        return False
    return all(re.search(rf"\b{a}\b", text) for a in _ACRONYM.findall(value))
