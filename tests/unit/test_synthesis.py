"""The lead's synthesis: checked sentence by sentence against the sources, bounded
in length, and never ending in a sentence its length limit cut."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from roles.synthesis import (
    SYNTHESIS_MAX_TOKENS,
    check_citations,
    evidence_line,
    synthesizer,
)
from runtime.text import cited_sentences, whole_sentences
from state.findings import Finding, Source
from state.report import Citation
from tests.unit.fakes import Scripted


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


COPIED_OUT = (
    "Storm Eunice struck Britain in February 2022 [1]. "
    "Cyclone Mocha struck Myanmar in May 2023 [2]. "
    "The floods in Pakistan killed 1,739 people and [1"
)


class CutShort(Scripted):
    """Answers as a model stopped by its length limit, keeping what it was asked."""

    asked: list[dict[str, Any]] = []

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.asked.append(kwargs)
        cut = AIMessage(COPIED_OUT, response_metadata={"finish_reason": "length"})
        return ChatResult(generations=[ChatGeneration(message=cut)])


def sources() -> tuple[list[Finding], dict[str, Citation]]:
    findings, citations = [], {}
    for n, title in enumerate(("Storm Eunice", "Cyclone Mocha"), start=1):
        source = Source(
            doc_id=title, passage_id=f"{title}#0", title=title, section="Summary"
        )
        findings.append(
            Finding(
                claim=f"{title} struck.",
                quote=f"{title} struck.",
                source=source,
                facet_ids=("f0",),
                values=(title,),
            )
        )
        citations[source.passage_id] = Citation(number=n, source=source)
    return findings, citations


def test_a_synthesis_cut_by_its_length_limit_loses_only_the_cut_sentence() -> None:
    model = CutShort(messages=iter(()), asked=[])
    writer = synthesizer(model, 60.0, 2048)
    assert writer is not None
    findings, citations = sources()
    done = asyncio.run(writer.synthesize("Which storms?", findings, citations, []))
    assert model.asked == [{"max_tokens": SYNTHESIS_MAX_TOKENS}]  # not the lead's 2048
    assert done.text == (
        "Storm Eunice struck Britain in February 2022 [1]. "
        "Cyclone Mocha struck Myanmar in May 2023 [2]."
    )


def test_a_lead_limit_below_the_synthesis_limit_is_kept() -> None:
    model = CutShort(messages=iter(()), asked=[])
    writer = synthesizer(model, 60.0, 300)
    assert writer is not None
    findings, citations = sources()
    asyncio.run(writer.synthesize("Which storms?", findings, citations, []))
    assert model.asked == [{"max_tokens": 300}]


def test_whole_sentences_keep_markers_after_the_stop() -> None:
    assert whole_sentences("One [1]. Two [2][3]. Thr") == "One [1]. Two [2][3]."
    assert whole_sentences("No end at all") == ""
