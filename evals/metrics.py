"""Pure scoring functions for eval runs: coverage, recall, precision and overlap.

Soft heading recall follows STORM: headings are compared through soft
cardinalities, so a predicted heading that shares words with a gold one counts
in part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

GOLD_EXCLUDED = ("See also", "References", "Further reading", "External links", "Notes")

STOPWORDS = frozenset(
    "the a an of and in on for to with at by from as its their".split()
)


def group_coverage(groups: Mapping[str, Sequence[str]], cited: Iterable[str]) -> float:
    """Share of groups with at least one of their titles cited.

    Args:
        groups: Group name to the article titles that cover it.
        cited: Titles of the articles cited by verified findings.

    Returns:
        The covered share, 1.0 when there are no groups.
    """
    if not groups:
        return 1.0
    cited_set = set(cited)
    covered = sum(1 for titles in groups.values() if cited_set.intersection(titles))
    return covered / len(groups)


def article_recall(gold: Iterable[str], cited: Iterable[str]) -> float:
    """Share of distinct gold titles that are cited; 1.0 when gold is empty."""
    gold_set = set(gold)
    if not gold_set:
        return 1.0
    return len(gold_set & set(cited)) / len(gold_set)


def document_precision(cited: Iterable[str], gold: Iterable[str]) -> float:
    """Share of distinct cited titles that are gold titles.

    Citing nothing scores 0.0 when there was something to cite, and 1.0 only
    when gold is empty too.
    """
    cited_set = set(cited)
    gold_set = set(gold)
    if not cited_set:
        return 0.0 if gold_set else 1.0
    return len(cited_set & gold_set) / len(cited_set)


def _tokens(text: str) -> set[str]:
    """Lower-case word tokens of a text, without stopwords."""
    return {word for word in re.findall(r"\w+", text.lower()) if word not in STOPWORDS}


def token_similarity(a: str, b: str) -> float:
    """Dice overlap of the word tokens of two headings, stopwords left out.

    Returns:
        2|A∩B| / (|A| + |B|), or 0.0 when either heading has no tokens.
    """
    tokens_a, tokens_b = _tokens(a), _tokens(b)
    if not tokens_a or not tokens_b:
        return 0.0
    return 2 * len(tokens_a & tokens_b) / (len(tokens_a) + len(tokens_b))


def soft_cardinality(
    items: Sequence[str],
    similarity: Callable[[str, str], float] = token_similarity,
) -> float:
    """STORM's soft cardinality: the sum over i of 1 / sum over j of sim(i, j).

    An item is always fully similar to itself (sim(i, i) = 1), so distinct items
    count 1 each and near-duplicates share their count. Similarities are taken
    to be non-negative. Empty items give 0.0.
    """
    total = 0.0
    for i, item in enumerate(items):
        row = sum(
            1.0 if i == j else similarity(item, other) for j, other in enumerate(items)
        )
        total += 1.0 / row
    return total


def heading_soft_recall(
    gold: Sequence[str],
    predicted: Sequence[str],
    similarity: Callable[[str, str], float] = token_similarity,
) -> float:
    """STORM's soft heading recall, |G ∩ P| / |G| on soft cardinalities.

    |G ∩ P| is |G| + |P| - |G ∪ P|, with G ∪ P the two lists joined.

    Returns:
        The recall clamped to [0, 1]; 1.0 when gold is empty (even if predicted
        is empty too), else 0.0 when predicted is empty.
    """
    if not gold:
        return 1.0
    if not predicted:
        return 0.0
    gold_card = soft_cardinality(gold, similarity)
    union = soft_cardinality([*gold, *predicted], similarity)
    overlap = gold_card + soft_cardinality(predicted, similarity) - union
    return min(1.0, max(0.0, overlap / gold_card))


def citation_precision(verified: int, claimed: int) -> float:
    """Share of report findings whose quote verifies; 1.0 when none are claimed."""
    if claimed == 0:
        return 1.0
    return verified / claimed


def duplicate_rate(findings: Sequence[tuple[str, str, str]]) -> float:
    """Share of findings that repeat an earlier one.

    A finding repeats an earlier one when it has the same span (passage id and
    exact quote) or the same claim once case and whitespace are folded.

    Args:
        findings: (passage_id, quote, claim) of each finding, in report order.

    Returns:
        The repeated share, 0.0 for no findings.
    """
    if not findings:
        return 0.0
    spans: set[tuple[str, str]] = set()
    claims: set[str] = set()
    repeats = 0
    for passage_id, quote, claim in findings:
        span = (passage_id, quote)
        folded = " ".join(claim.split()).casefold()
        if span in spans or folded in claims:
            repeats += 1
        spans.add(span)
        claims.add(folded)
    return repeats / len(findings)


def gold_headings(sections: Iterable[str]) -> list[str]:
    """Section headings of an article that count as gold, in order.

    Headings are stripped; empty ones, those in GOLD_EXCLUDED and repeats are
    dropped, both compared case-insensitively.
    """
    excluded = {heading.casefold() for heading in GOLD_EXCLUDED}
    seen: set[str] = set()
    headings: list[str] = []
    for section in sections:
        heading = section.strip()
        key = heading.casefold()
        if not heading or key in excluded or key in seen:
            continue
        seen.add(key)
        headings.append(heading)
    return headings
