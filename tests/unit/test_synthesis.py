"""The lead's synthesis is checked sentence by sentence against the sources."""

from __future__ import annotations

import pytest

from roles.synthesis import check_citations, evidence_line
from runtime.text import cited_sentences
from state.findings import Finding, Source


@pytest.mark.parametrize(
    ("text", "stands", "markers", "sentences"),
    [
        ("Floods hit Pakistan [1]. Storms hit Britain [2].", True, 0, 0),
        ("Floods hit [1]. Nothing backs this. Storms [7] came. [2]", True, 1, 1),
        ("Every medium [1][2], music too [4]; see also [99].", True, 1, 0),
        ("No citation here. None here either.", False, 0, 2),
        ("Only invented ones [8]. And [9].", False, 2, 2),
        ("1. [2]\n\n2. [3]\n\n3. [1][4]", False, 0, 3),
        ("Storms hit Britain [2].\n\n1. [3]", True, 0, 1),
    ],
)
def test_sentences_without_a_valid_citation_are_dropped(
    text: str, stands: bool, markers: int, sentences: int
) -> None:
    checked, removed, dropped = check_citations(text, {1, 2, 3, 4})
    assert (removed, dropped) == (markers, sentences)
    assert (checked is not None) == stands
    if checked is not None:
        assert all("[" in s for s in cited_sentences(checked))
        assert "[7]" not in checked and "[99]" not in checked
        assert "  " not in checked and " ." not in checked


def test_paragraphs_and_abbreviations_survive() -> None:
    text = "The U.S. was hit [1]. Then more [2].\n\nA second paragraph [3]."
    checked, _, _ = check_citations(text, {1, 2, 3})
    assert checked == text


def test_the_lead_reads_a_quote_only_where_the_claim_says_something_else() -> None:
    source = Source(doc_id="d", passage_id="d#1", title="D", section="Impact")
    said = "Storm Eunice struck Britain on 18 February 2022."
    pointed = Finding(
        claim=said, quote=said, source=source, facet_ids=("f0",), values=("Eunice",)
    )
    assert evidence_line(3, pointed) == f"[3] {said}"
    claimed = pointed.model_copy(update={"claim": "Eunice struck Britain."})
    assert evidence_line(3, claimed) == f'[3] Eunice struck Britain. (quote: "{said}")'
