"""Evidence: what a subagent's tools returned, recorded by code and numbered.

Each passage a tool shows a subagent gets a handle for its task, in the order
it was first shown (E1, E2, ...), and its sentences are numbered ([1], [2],
...) by `runtime.sentences`, the splitter verification uses. The task's ledger
is the list of those passages, handle order. A model points (a handle and
sentence numbers); `pointed_quote` turns the pointer into the exact words, so
no model ever copies a quote or a passage id. Only code writes the ledger.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from typing_extensions import TypedDict

from runtime.kb import KnowledgeBase, Passage, stems
from runtime.sentences import sentence_spans

SHOWN_PER_HIT = 3
"""Sentences a search shows of each passage it found: those most like the query."""
MAX_QUOTE_SENTENCES = 3
"""Most sentences one finding may quote."""
_HANDLE = re.compile(r"\s*\[?E(\d+)\]?\s*", re.IGNORECASE)


class Excerpt(TypedDict):
    """What a tool showed of one passage (a tool message's artifact).

    Attributes:
        passage_id: The passage.
        title: Its document's title.
        section: Its heading path.
        url: Where its document lives.
        sentences: All of its sentences, numbered from 1 in this order.
        shown: The numbers of the sentences shown.
    """

    passage_id: str
    title: str
    section: str
    url: str | None
    sentences: list[str]
    shown: list[int]


def excerpt(passage: Passage, query: str | None = None) -> Excerpt:
    """A passage as a tool shows it: whole, or its sentences most like `query`."""
    text = passage.text
    numbered = [text[a:b] for a, b in sentence_spans(text)]
    shown = list(range(1, len(numbered) + 1))
    if query is not None:
        wanted = stems(query)
        ranked = sorted(shown, key=lambda n: -len(wanted & stems(numbered[n - 1])))
        shown = sorted(ranked[:SHOWN_PER_HIT])
    return Excerpt(
        passage_id=passage.passage_id,
        title=passage.title,
        section=passage.section,
        url=passage.url,
        sentences=numbered,
        shown=shown,
    )


def handle(index: int) -> str:
    """The handle of the ledger's `index`-th passage (from 0): E1, E2, ..."""
    return f"E{index + 1}"


def passage_of(reference: str, ledger: Sequence[str]) -> str | None:
    """The passage a handle ("E2") or a passage id names, if the ledger holds it."""
    matched = _HANDLE.fullmatch(reference)
    if matched:
        at = int(matched.group(1))
        return ledger[at - 1] if 1 <= at <= len(ledger) else None
    return reference if reference in ledger else None


def record(ledger: Sequence[str], excerpts: Iterable[Excerpt]) -> tuple[str, list[str]]:
    """The excerpts as numbered evidence blocks, and the passages new to the ledger."""
    known, new, blocks = list(ledger), [], []
    for shown in excerpts:
        if shown["passage_id"] not in known:
            known.append(shown["passage_id"])
            new.append(shown["passage_id"])
        blocks.append(block(handle(known.index(shown["passage_id"])), shown))
    return ("\n\n".join(blocks) if blocks else "Nothing found."), new


def block(name: str, shown: Excerpt) -> str:
    """One evidence block: handle, title, section and source once, then sentences."""
    head = f"{name}: {shown['title']} > {shown['section']}"
    if shown["url"] and shown["url"].startswith(("http://", "https://")):
        head += f" ({shown['url']})"
    lines = [head, *(f"[{n}] {shown['sentences'][n - 1]}" for n in shown["shown"])]
    hidden = len(shown["sentences"]) - len(shown["shown"])
    if hidden > 0:
        lines.append(f"({hidden} more sentences: read {name})")
    return "\n".join(lines)


def pointed_quote(text: str, numbers: Sequence[int]) -> str:
    """The exact words of sentences `numbers` of `text`, first to last.

    Raises:
        ValueError: a number is out of range, or they span too many sentences.
    """
    spans = sentence_spans(text)
    wanted = sorted(set(numbers))
    if not wanted:
        raise ValueError("names no sentence")
    if wanted[0] < 1 or wanted[-1] > len(spans):
        bad = next(n for n in wanted if not 1 <= n <= len(spans))
        raise ValueError(f"sentence {bad} out of range (1-{len(spans)})")
    if wanted[-1] - wanted[0] >= MAX_QUOTE_SENTENCES:
        raise ValueError(f"spans more than {MAX_QUOTE_SENTENCES} sentences")
    return text[spans[wanted[0] - 1][0] : spans[wanted[-1] - 1][1]]


def sentence_counts(ledger: Sequence[str], kb: KnowledgeBase) -> list[int]:
    """How many sentences each passage of the ledger has, in handle order."""
    found = kb.passages(ledger)
    return [len(sentence_spans(found[p].text)) if p in found else 0 for p in ledger]
