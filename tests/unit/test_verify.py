"""Verification by code: quotes, claims and values that no model can fake."""

from __future__ import annotations

import pytest

from nodes.verify import verify
from roles.verify import (
    NOT_VERBATIM,
    OFF_PERIOD,
    OFF_VALUE,
    SHORT_QUOTE,
    UNKNOWN_PASSAGE,
    UNSUPPORTED,
    one_per_quote,
    quote_sentences,
    supports,
    verify_findings,
)
from runtime.context import Context
from runtime.kb import KnowledgeBase
from runtime.text import names, period_of, sentences
from state.coverage import count_by_value
from state.findings import Finding
from tests.support import run_node

IMPACT = "Hurricane_Idalia#9"
IMPACT_QUOTE = (
    "President Joe Biden said that he had spoken to Florida Governor Ron DeSantis"
)
LEAD = "Hurricane_Idalia#0"
LEAD_QUOTE = "Hurricane Idalia was a powerful and destructive Category 4 hurricane"


def finding(
    kb: KnowledgeBase,
    quote: str,
    *,
    claim: str | None = None,
    values: tuple[str, ...] = ("Hurricane Idalia",),
    passage_id: str = IMPACT,
) -> Finding:
    passage = kb.passage(passage_id) or kb.passage(IMPACT)
    assert passage is not None
    source = passage.source().model_copy(update={"passage_id": passage_id})
    return Finding(
        claim=claim or quote,
        quote=quote,
        source=source,
        facet_ids=("f0",),
        values=values,
    )


@pytest.mark.parametrize(
    ("quote", "claim", "passage_id", "reason"),
    [
        (" ", None, IMPACT, SHORT_QUOTE),
        ("a", None, IMPACT, SHORT_QUOTE),
        ("Joe Biden spoke", None, IMPACT, SHORT_QUOTE),
        (IMPACT_QUOTE, None, "Hurricane_Idalia#999", UNKNOWN_PASSAGE),
        ("The hurricane was caused by a volcano.", None, IMPACT, NOT_VERBATIM),
        (LEAD_QUOTE, None, IMPACT, NOT_VERBATIM),
        (
            IMPACT_QUOTE,
            "Hurricane Idalia killed 5 million people and destroyed the Moon.",
            IMPACT,
            UNSUPPORTED,
        ),
        (IMPACT_QUOTE, "Biden spoke to DeSantis on 3 occasions.", IMPACT, UNSUPPORTED),
        (IMPACT_QUOTE, "Yes.", IMPACT, UNSUPPORTED),
    ],
)
def test_findings_that_fail_a_check_are_dropped_with_the_reason(
    freshwiki_kb: str, quote: str, claim: str | None, passage_id: str, reason: str
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    kept, dropped = verify_findings(
        [finding(kb, quote, claim=claim, passage_id=passage_id)], kb
    )
    assert kept == []
    assert dropped == {reason: 1}


def test_quotes_match_whatever_their_case_and_spacing(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    quote = "  " + IMPACT_QUOTE.upper().replace(" ", "\n ")
    kept, _ = verify_findings(
        [finding(kb, quote, claim="Biden said he had spoken to Governor DeSantis.")],
        kb,
    )
    assert [f.verified for f in kept] == [True]


def test_a_finding_counts_only_for_values_its_evidence_is_about(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    named_by_title = finding(kb, IMPACT_QUOTE, values=("Hurricane Idalia", "floods"))
    category = finding(kb, IMPACT_QUOTE, values=("Category 4 hurricane",))
    elsewhere = finding(kb, IMPACT_QUOTE, values=("earthquakes",))
    # the lead names it, but not in its first sentence: not what the article is
    later_in_lead = finding(kb, IMPACT_QUOTE, values=("Atlantic hurricane season",))
    kept, dropped = verify_findings(
        [named_by_title, category, elsewhere, later_in_lead], kb
    )
    assert [f.values for f in kept] == [
        ("Hurricane Idalia",),
        ("Category 4 hurricane",),
    ]
    assert dropped == {OFF_VALUE: 2}


@pytest.mark.parametrize(
    ("claim", "shown"),
    [
        (
            "Biden said he had spoken to Governor DeSantis.",
            "Biden said he had spoken to Governor DeSantis.",
        ),
        # a name where the name check cannot look: a sentence's first word
        ("Trump said that he had spoken to Florida Governor Ron DeSantis", None),
        # a word swapped for another, most words still the evidence's
        ("President Joe Biden said he had insulted Florida Governor DeSantis", None),
    ],
)
def test_a_verified_finding_asserts_only_what_its_evidence_says(
    freshwiki_kb: str, claim: str, shown: str | None
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    kept, _ = verify_findings([finding(kb, IMPACT_QUOTE, claim=claim)], kb)
    assert [f.claim for f in kept] == [shown or impact_sentence(kb)]


def impact_sentence(kb: KnowledgeBase) -> str:
    """The whole sentence of the passage that holds IMPACT_QUOTE."""
    passage = kb.passage(IMPACT)
    assert passage is not None
    sentence = quote_sentences(IMPACT_QUOTE, passage.text)
    assert sentence is not None and sentence != IMPACT_QUOTE
    return sentence


def test_a_verified_quote_is_the_whole_sentences_that_hold_it(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    kept, _ = verify_findings([finding(kb, IMPACT_QUOTE)], kb)
    assert [f.quote for f in kept] == [impact_sentence(kb)]


def test_names_respects_acronyms_and_values_of_no_content_words() -> None:
    assert names("US", "Storms hit the US in 2022.")
    assert not names("US", "It told us that sales grew.")
    assert names("Other", "Other events followed.")
    assert not names("Other", "Events followed.")


@pytest.mark.parametrize(
    ("claim", "evidence", "backed"),
    [
        ("The company reported a profit.", "the company reported a profit", True),
        ("The company reported no profit.", "the company reported a profit", False),
        ("The team won the final.", "the team did not win the final", False),
        ("The team didn't win.", "the team did not win the final", True),
        (
            "48 Atlantis died by flooding in survived administered Kashmir",
            "48 people died and the flooding survived in administered Pakistan",
            False,
        ),
        (
            "In Pakistan 48 people died by flooding",
            "48 people died by flooding in Pakistan",
            True,
        ),
    ],
)
def test_a_claim_carries_the_negation_of_its_evidence(
    claim: str, evidence: str, backed: bool
) -> None:
    assert supports(claim, evidence) == backed


def test_a_finding_for_no_value_is_kept_as_evidence(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    kept, dropped = verify_findings([finding(kb, IMPACT_QUOTE, values=())], kb)
    assert len(kept) == 1 and not dropped


def test_verify_node_reports_drops_by_reason(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    findings = [finding(kb, IMPACT_QUOTE), finding(kb, "a"), finding(kb, " ")]
    out = run_node(
        verify,
        {"question": "q", "findings": findings},
        Context(kb_path=freshwiki_kb, lead_model="extractive"),
    )
    assert [f.quote for f in out["findings"]] == [impact_sentence(kb)]
    assert out["dropped"] == {SHORT_QUOTE: 2}


EUNICE_QUOTE = "The storm had left 26,000 homes without power"


@pytest.mark.parametrize(
    ("question", "value", "dropped"),
    [
        ("Which storms did damage in 2023?", "Storms", {OFF_PERIOD: 1}),
        ("Which storms did damage between 2020 and 2023?", "Storms", {}),
        ("Which storms did damage in 2022?", "Storms", {}),
        ("Which storms did damage?", "Storms", {}),
        # The plan chose this document: its period was the plan's to judge.
        ("Which storms did damage in 2023?", "Storm Eunice", {}),
    ],
)
def test_evidence_counts_only_of_the_question_s_period(
    freshwiki_kb: str, question: str, value: str, dropped: dict[str, int]
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    storms = finding(kb, EUNICE_QUOTE, values=(value,), passage_id="Storm_Eunice#3")
    out = run_node(
        verify,
        {"question": question, "findings": [storms]},
        Context(kb_path=freshwiki_kb, lead_model="extractive"),
    )
    assert out["dropped"] == dropped
    assert [f.values for f in out["findings"]] == [(value,)] * (1 - len(dropped))


@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("What struck in 2022 and 2023?", {"2022", "2023"}),
        ("What changed between 2019 and 2021?", {"2019", "2020", "2021"}),
        ("Films of 2019\u20132020 and 2023", {"2019", "2020", "2023"}),
        ("What happened from 2020 to 2022?", {"2020", "2021", "2022"}),
        ("Which storms struck?", set()),
    ],
)
def test_a_question_s_period_is_its_years_and_spans(
    question: str, years: set[str]
) -> None:
    assert period_of(question) == years


def test_findings_quoting_the_same_words_are_one(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    first = finding(kb, IMPACT_QUOTE)
    again = finding(
        kb, IMPACT_QUOTE.upper(), claim="Biden spoke to DeSantis", values=("Florida",)
    ).model_copy(update={"facet_ids": ("f1",)})
    elsewhere = finding(kb, LEAD_QUOTE, passage_id="Hurricane_Idalia#0")
    (merged, other) = one_per_quote([first, again, elsewhere])
    assert merged.values == ("Hurricane Idalia", "Florida")
    assert merged.facet_ids == ("f0", "f1") and other == elsewhere


def test_findings_on_one_sentence_count_once_for_coverage(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    words = IMPACT_QUOTE.split()
    slices = [" ".join(words[i : i + 6]) for i in (0, 3, 6)]
    kept, dropped = verify_findings([finding(kb, q) for q in slices], kb)
    assert len(kept) == 3 and not dropped
    (one,) = one_per_quote(kept)
    assert count_by_value([one]) == {"Hurricane Idalia": 1}


def test_a_sentence_pointed_at_alone_and_with_the_next_is_one_piece(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    florida = "Hurricane_Idalia#10"
    passage = kb.passage(florida)
    assert passage is not None
    first, second, *_ = sentences(passage.text)
    alone = finding(kb, first, values=("Florida",), passage_id=florida)
    with_next = finding(kb, f"{first} {second}", passage_id=florida).model_copy(
        update={"facet_ids": ("f1",)}
    )
    kept, _ = verify_findings([alone, with_next], kb)
    (merged,) = one_per_quote(kept)
    assert merged.quote == kept[1].quote
    assert merged.values == ("Hurricane Idalia", "Florida")
    assert merged.facet_ids == ("f1", "f0")


def test_words_within_another_passages_quote_are_evidence_of_their_own(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    short = finding(kb, "The storm killed five people.")
    longer = finding(
        kb, "Officials said the storm killed five people.", passage_id=LEAD
    )
    assert one_per_quote([short, longer]) == [short, longer]
