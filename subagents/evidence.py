"""Evidence: what a subagent's tools returned, recorded by code and numbered.

Each passage a tool shows a subagent gets a handle for its task, in the order
it was first shown (E1, E2, ...), and its sentences are numbered ([1], [2],
...) by `runtime.sentences`, the splitter verification uses. The task's ledger
maps those passages, in handle order, to the numbers of the sentences shown of
each. A model points (a handle and sentence numbers it was shown);
`pointed_quote` turns the pointer into the exact words, so no model ever copies
a quote or a passage id. Only code writes the ledger.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from typing_extensions import TypedDict

from runtime.kb import Passage
from runtime.sources import OUTPUT_SECTION
from runtime.text import sentence_spans, stems
from state.evidence import ToolEvidence

NOTHING_FOUND = "Nothing found."
SHOWN_PER_HIT = 3
"""Sentences a search shows of each passage it found: those most like the query."""
MAX_QUOTE_SENTENCES = 3
"""Most sentences one finding may quote."""
_HANDLE = re.compile(r"\s*\[?E(\d+)\]?\s*", re.IGNORECASE)
Ledger = dict[str, list[int]]
"""A subagent's evidence: each passage shown, in handle order (E1 first), and the
numbers of its sentences shown."""


def shown_more(ledger: Ledger, shown: Ledger) -> Ledger:
    """The ledger with more shown: new passages take the next handles.

    The reducer of a subagent's `evidence`: a passage shown again keeps its
    handle and adds the sentences shown this time.
    """
    merged = dict(ledger)
    for passage_id, numbers in shown.items():
        merged[passage_id] = sorted({*merged.get(passage_id, ()), *numbers})
    return merged


class Excerpt(TypedDict):
    """What a tool showed of one passage (a tool message's artifact).

    Attributes:
        passage_id: The passage.
        title: Its document's title.
        section: Its heading path.
        url: Where its document lives.
        sentences: All of its sentences, numbered from 1 in this order.
        shown: The numbers of the sentences shown.
        record: What a tool returned from outside the knowledge base, as code
            recorded it; None for a knowledge-base passage.
    """

    passage_id: str
    title: str
    section: str
    url: str | None
    sentences: list[str]
    shown: list[int]
    record: ToolEvidence | None


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
        record=None,
    )


MAX_SHOWN_SENTENCES = 40
"""Sentences of a tool's output shown (and citable); the rest are left out."""


def recorded_excerpt(evidence: ToolEvidence) -> Excerpt:
    """What a tool returned, shown as evidence: its first MAX_SHOWN_SENTENCES."""
    numbered = [evidence.text[a:b] for a, b in sentence_spans(evidence.text)]
    return Excerpt(
        passage_id=evidence.evidence_id,
        title=f"{evidence.tool} {evidence.args}".strip(),
        section=OUTPUT_SECTION,
        url=evidence.url,
        sentences=numbered,
        shown=list(range(1, min(len(numbered), MAX_SHOWN_SENTENCES) + 1)),
        record=evidence,
    )


def handle(index: int) -> str:
    """The handle of the ledger's `index`-th passage (from 0): E1, E2, ..."""
    return f"E{index + 1}"


def handle_of(passage_id: str, ledger: Iterable[str]) -> str:
    """The handle of a passage the ledger holds."""
    return handle(list(ledger).index(passage_id))


def passage_of(reference: str, ledger: Iterable[str]) -> str | None:
    """The passage a handle ("E2") or a passage id names, if the ledger holds it."""
    passages = list(ledger)
    matched = _HANDLE.fullmatch(reference)
    if matched:
        at = int(matched.group(1))
        return passages[at - 1] if 1 <= at <= len(passages) else None
    return reference if reference in passages else None


def record(
    ledger: Mapping[str, object], excerpts: Iterable[Excerpt]
) -> tuple[str, Ledger]:
    """The excerpts as numbered evidence blocks, and what they add to the ledger."""
    known, shown, blocks = list(ledger), Ledger(), []
    for excerpt in excerpts:
        passage_id = excerpt["passage_id"]
        if passage_id not in known:
            known.append(passage_id)
        shown[passage_id] = sorted({*shown.get(passage_id, ()), *excerpt["shown"]})
        blocks.append(block(handle(known.index(passage_id)), excerpt))
    return ("\n\n".join(blocks) if blocks else NOTHING_FOUND), shown


def block(name: str, shown: Excerpt) -> str:
    """One evidence block: handle, title, section and source once, then sentences."""
    head = f"{name}: {shown['title']} > {shown['section']}"
    if shown["url"] and shown["url"].startswith(("http://", "https://")):
        head += f" ({shown['url']})"
    lines = [head, *(f"[{n}] {shown['sentences'][n - 1]}" for n in shown["shown"])]
    hidden = len(shown["sentences"]) - len(shown["shown"])
    if hidden > 0 and shown["record"] is None:
        lines.append(f"({hidden} more sentences: read {name})")
    elif hidden > 0:
        lines.append(f"({hidden} more sentences not shown)")
    return "\n".join(lines)


def runs(numbers: Sequence[int]) -> list[list[int]]:
    """Sentence numbers in runs of one after another: [1, 2, 5] -> [[1, 2], [5]]."""
    found: list[list[int]] = []
    for n in sorted(set(numbers)):
        if found and n == found[-1][-1] + 1:
            found[-1].append(n)
        else:
            found.append([n])
    return found


def pointed_quote(text: str, numbers: Sequence[int], shown: Collection[int]) -> str:
    """The exact words of sentences `numbers` of `text`, first to last.

    Raises:
        ValueError: no number, a sentence that was not `shown` (or does not
            exist), a gap between them, or more than MAX_QUOTE_SENTENCES.
    """
    spans = sentence_spans(text)
    wanted = sorted(set(numbers))
    if not wanted:
        raise ValueError("names no sentence")
    unseen = [n for n in wanted if n not in shown or not 1 <= n <= len(spans)]
    if unseen:
        raise ValueError(f"sentence {unseen[0]} was not shown")
    if wanted[-1] - wanted[0] + 1 != len(wanted):
        raise ValueError("sentences not one after another")
    if len(wanted) > MAX_QUOTE_SENTENCES:
        raise ValueError(f"more than {MAX_QUOTE_SENTENCES} sentences")
    return text[spans[wanted[0] - 1][0] : spans[wanted[-1] - 1][1]]
