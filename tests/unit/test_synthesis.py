"""The lead's synthesis: checked sentence by sentence against the sources it cites,
bounded in length, and never ending in a sentence its length limit cut."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from roles.synthesis import (
    MAX_CHOSEN,
    MAX_SHOWN,
    NOTHING_CHOSEN,
    SYNTHESIS_MAX_TOKENS,
    Checked,
    Cited,
    check_citations,
    choosing_schema,
    chosen_opening,
    cited_evidence,
    evidence_line,
    shown_findings,
    synthesizer,
    written_sentences,
)
from runtime.text import cited_sentences, whole_sentences
from state.findings import Finding, Source
from state.report import Citation
from tests.unit.fakes import FAIL, Scripted, scripted

SAYS_IT_ALL = Cited(
    "Floods hit Pakistan. Storms came and hit Britain. Every medium, music too, "
    "see also. The U.S. was hit. Then more storms. A second paragraph.",
    "Notes",
)


def backing_all(*numbers: int) -> dict[int, Cited]:
    """Sources that each support every sentence the marker tests write."""
    return dict.fromkeys(numbers, SAYS_IT_ALL)


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
        ("1. Storms hit Britain [2].\n2. Floods hit.", True, 0, 1),
    ],
)
def test_sentences_without_a_valid_citation_are_dropped(
    text: str, stands: bool, markers: int, sentences: int
) -> None:
    outcome = check_citations(text, backing_all(1, 2, 3, 4))
    checked = outcome.text
    assert (outcome.citations_dropped, outcome.sentences_dropped) == (
        markers,
        sentences,
    )
    assert (checked is not None) == stands
    if checked is not None:
        assert all("[" in s for s in cited_sentences(checked))
        assert "[7]" not in checked and "[99]" not in checked
        assert "  " not in checked and " ." not in checked


def test_paragraphs_and_abbreviations_survive() -> None:
    text = "The U.S. was hit [1]. Then more storms [2].\n\nA second paragraph [3]."
    assert check_citations(text, backing_all(1, 2, 3)).text == text


BOX_OFFICE = {
    1: Cited(
        "Minions: The Rise of Gru grossed over $939 million worldwide, "
        "the sixth-highest-grossing film of 2022.",
        "Minions: The Rise of Gru",
    ),
    2: Cited(
        "The film was released in the United States on April 22, 2022. "
        "It grossed $69 million against a budget of $70-90 million.",
        "The Northman",
    ),
}


@pytest.mark.parametrize(
    ("sentence", "stands"),
    [
        ("Minions: The Rise of Gru grossed over $939 million worldwide. [1]", True),
        # What the question asks, cited to evidence that does not say it.
        ("The film flopped or thrived at the box office in 2022. [2]", False),
        # A number, a name or a negation its source does not write.
        ("Minions: The Rise of Gru grossed over $950 million worldwide. [1]", False),
        ("The Northman grossed $69 million in Canada. [2]", False),
        ("The Northman was not released in the United States. [2]", False),
        # Supported only by its two sources together, each named by its marker.
        (
            "Minions grossed over $939 million [1], and The Northman grossed "
            "$69 million [2].",
            True,
        ),
        # Said by neither source alone, nor by both it cites together.
        ("Minions and The Northman grossed $939 million. [2]", False),
    ],
)
def test_a_sentence_stands_only_where_the_sources_it_cites_support_it(
    sentence: str, stands: bool
) -> None:
    checked = check_citations(sentence, BOX_OFFICE)
    assert (checked.text == sentence) == stands
    assert checked.sentences_unsupported == (not stands)
    assert checked.sentences_dropped == checked.sentences_recited == 0


def test_a_line_copied_under_the_wrong_number_is_cited_to_the_source_saying_it() -> (
    None
):
    text = (
        "[2] Minions: The Rise of Gru grossed over $939 million worldwide.\n"
        "[1] The Northman grossed $69 million.\n"
        "[3] The Northman grossed $69 million."
    )
    checked = check_citations(text, BOX_OFFICE)
    assert checked.text == (
        "Minions: The Rise of Gru grossed over $939 million worldwide. [1] "
        "The Northman grossed $69 million. [2]"
    )
    assert (checked.sentences_kept, checked.sentences_recited) == (2, 2)
    assert checked.sentences_dropped == 1  # the repeat
    assert checked.citations_dropped == 1  # [3] names no source


def test_a_finding_backs_its_number_with_its_claim_quote_and_title() -> None:
    findings, citations = sources()
    told = findings[0].model_copy(update={"claim": "Eunice reached Wales."})
    evidence = cited_evidence([told, findings[1]], citations)
    assert evidence[1] == Cited(
        f"Eunice reached Wales. {findings[0].quote}", "Storm Eunice"
    )
    assert evidence[2].subject == "Cyclone Mocha"


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


STRUCK = (
    ("Storm Eunice", "Storm Eunice struck Britain in February 2022."),
    ("Cyclone Mocha", "Cyclone Mocha struck Myanmar in May 2023."),
)


def sources(
    said: Sequence[tuple[str, str]] = STRUCK,
) -> tuple[list[Finding], dict[str, Citation]]:
    """A finding of each (title, sentence), its passage cited by its place from 1."""
    findings, citations = [], {}
    for n, (title, sentence) in enumerate(said, start=1):
        source = Source(
            doc_id=title, passage_id=f"{title}#{n}", title=title, section="Summary"
        )
        findings.append(
            Finding(
                claim=sentence,
                quote=sentence,
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
    assert done.checked.text == (
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


def test_markers_that_lead_a_line_cite_the_sentences_after_them() -> None:
    text = (
        "- [1] Minions: The Rise of Gru grossed over $939 million worldwide. "
        "It was the sixth-highest-grossing film of 2022.\n"
        "2. [2] The Northman grossed $69 million.\n"
        "[1] The Northman was released in 2022."
    )
    assert written_sentences(text) == [
        "Minions: The Rise of Gru grossed over $939 million worldwide. [1]",
        "It was the sixth-highest-grossing film of 2022. [1]",
        "The Northman grossed $69 million. [2]",
        "The Northman was released in 2022. [1]",
    ]
    checked = check_citations(text, BOX_OFFICE)
    assert checked.text == " ".join(written_sentences(text)[:3]) + (
        " The Northman was released in 2022. [2]"
    )


def test_a_line_led_by_a_marker_keeps_the_markers_its_sentences_carry() -> None:
    assert written_sentences("[1] Storms hit. Floods came [2].") == [
        "Storms hit. [1]",
        "Floods came [2].",
    ]


def test_a_summary_cut_whole_says_so_and_one_never_written_says_nothing() -> None:
    cut = check_citations("The film thrived at the box office. [2]", BOX_OFFICE)
    assert cut.text is None
    assert cut.shown() == (
        "_No summary: none of the 1 sentence(s) the lead wrote cites a finding "
        "that supports it._"
    )
    assert Checked(None).shown() is None


CHOSEN = "_Chosen by the lead from the findings, as no sentence it wrote stood:_"


def test_a_lead_whose_sentences_all_fall_chooses_the_findings_that_open_it() -> None:
    model = scripted("The storms were bad.", {"numbers": [2, 9, 2, 1]})
    writer = synthesizer(model, 60.0, 2048)
    assert writer is not None
    findings, citations = sources()
    done = asyncio.run(writer.synthesize("Which storms?", findings, citations, []))
    assert done.checked.text == (
        f"{CHOSEN}\n\nCyclone Mocha struck Myanmar in May 2023. [2]\n\n"
        "Storm Eunice struck Britain in February 2022. [1]"
    )
    assert (done.checked.findings_chosen, done.checked.sentences_dropped) == (2, 1)
    assert done.usage.calls == 2


@pytest.mark.parametrize(
    ("choices", "why"),
    [
        (({"numbers": [7, 0]},), NOTHING_CHOSEN),
        (("not JSON", "{still not"), NOTHING_CHOSEN),
        ((f"{FAIL}down",), "choosing findings to open it failed (down)"),
    ],
)
def test_a_choice_that_names_no_evidence_opens_nothing_and_says_why(
    choices: tuple[Any, ...], why: str
) -> None:
    writer = synthesizer(scripted("Nothing cited here.", *choices), 60.0, 2048)
    assert writer is not None
    findings, citations = sources()
    done = asyncio.run(writer.synthesize("Which storms?", findings, citations, []))
    assert done.checked.text is None
    assert (done.checked.findings_chosen, done.checked.failure) == (0, why)
    assert done.checked.shown() == (
        "_No summary: none of the 1 sentence(s) the lead wrote cites a finding "
        f"that supports it; {why}._"
    )


def test_a_lead_that_writes_nothing_and_chooses_nothing_is_told_of() -> None:
    writer = synthesizer(scripted("", {"numbers": [9]}), 60.0, 2048)
    assert writer is not None
    findings, citations = sources()
    done = asyncio.run(writer.synthesize("Which storms?", findings, citations, []))
    assert done.checked.shown() == f"_No summary: {NOTHING_CHOSEN}._"


def test_a_synthesis_that_stands_is_not_followed_by_a_choice() -> None:
    model = scripted("Storm Eunice struck Britain in February 2022 [1].", f"{FAIL}x")
    writer = synthesizer(model, 60.0, 2048)
    assert writer is not None
    findings, citations = sources()
    done = asyncio.run(writer.synthesize("Which storms?", findings, citations, []))
    assert done.checked.text == "Storm Eunice struck Britain in February 2022 [1]."
    assert (done.checked.findings_chosen, done.usage.calls) == (0, 1)


def test_the_lead_may_choose_only_numbers_it_was_shown() -> None:
    numbers = choosing_schema({3, 1})["properties"]["numbers"]
    assert numbers["items"] == {"type": "integer", "enum": [1, 3]}
    assert (numbers["minItems"], numbers["maxItems"]) == (1, MAX_CHOSEN)


def test_a_chosen_opening_holds_one_finding_a_source_and_at_most_the_cap() -> None:
    titles = [
        "Storm Eunice",
        "Storm Eunice",
        *(f"Storm {n}" for n in range(MAX_CHOSEN)),
    ]
    findings, citations = sources(
        [
            (title, f"{title} struck Britain on day {n} of 2022.")
            for n, title in enumerate(titles)
        ]
    )
    opening = chosen_opening(range(1, len(titles) + 1), findings, citations)
    assert len(opening) == MAX_CHOSEN
    cited = [line.rsplit(" ", 1)[-1] for line in opening]
    assert cited == [f"[{n}]" for n in (1, *range(3, MAX_CHOSEN + 2))]


def test_the_lead_reads_every_value_s_first_finding_before_any_second() -> None:
    said = [(f"Storm {n}", f"Storm {n} struck a coast in 2022.") for n in range(40)]
    findings, _ = sources(said)
    seconds = [f.model_copy(update={"claim": f"Again: {f.claim}"}) for f in findings]
    # each value's second finding right after its first
    both = [f for pair in zip(findings, seconds, strict=True) for f in pair]
    shown = shown_findings(both[:10])
    assert shown == both[:10]  # few findings: all of them, in their order
    shown = shown_findings(both)
    assert len(shown) == MAX_SHOWN and shown == findings[:MAX_SHOWN]
    # 22 values: their first findings, and seconds while room is left, in order
    assert shown_findings(both[:44]) == both[:4] + findings[2:22]
