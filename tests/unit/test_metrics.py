from __future__ import annotations

import pytest

from evals.metrics import (
    article_recall,
    citation_precision,
    document_precision,
    duplicate_rate,
    gold_headings,
    group_coverage,
    heading_soft_recall,
    soft_cardinality,
    token_similarity,
)


def always_similar(a: str, b: str) -> float:
    return 1.0


def never_similar(a: str, b: str) -> float:
    return 0.0


# group_coverage


def test_group_coverage_counts_groups_with_a_cited_title() -> None:
    groups = {
        "quakes": ["Turkey earthquake", "Haiti earthquake"],
        "floods": ["Pakistan floods"],
    }
    assert group_coverage(groups, ["Haiti earthquake", "Unrelated"]) == 0.5


def test_group_coverage_every_group_cited() -> None:
    groups = {"a": ["A1"], "b": ["B1", "B2"]}
    assert group_coverage(groups, iter(["B2", "A1"])) == 1.0


def test_group_coverage_without_groups_is_full() -> None:
    assert group_coverage({}, []) == 1.0


def test_group_coverage_nothing_cited() -> None:
    assert group_coverage({"a": ["A1"], "b": []}, []) == 0.0


# article_recall


def test_article_recall_share_of_gold_cited() -> None:
    assert article_recall(["A", "B", "C", "D"], ["B", "D", "X"]) == 0.5


def test_article_recall_ignores_repeated_titles() -> None:
    assert article_recall(["A", "A", "B"], ["A", "A"]) == 0.5


def test_article_recall_empty_gold_is_full() -> None:
    assert article_recall([], ["A"]) == 1.0


# document_precision


def test_document_precision_share_of_cited_in_gold() -> None:
    assert document_precision(["A", "X", "A", "Y"], ["A", "B"]) == pytest.approx(1 / 3)


def test_document_precision_nothing_cited_with_gold_is_zero() -> None:
    assert document_precision([], ["A"]) == 0.0


def test_document_precision_both_empty_is_full() -> None:
    assert document_precision([], []) == 1.0


def test_document_precision_empty_gold_is_zero() -> None:
    assert document_precision(["A"], []) == 0.0


# token_similarity


def test_token_similarity_dice_on_content_words() -> None:
    # {early, history} and {history, city}: 2 * 1 / (2 + 2)
    assert token_similarity("Early history", "History of the City") == 0.5


def test_token_similarity_same_words_any_case_and_punctuation() -> None:
    assert token_similarity("Causes and effects", "effects, causes") == 1.0


def test_token_similarity_disjoint() -> None:
    assert token_similarity("Economy", "Climate") == 0.0


def test_token_similarity_only_stopwords_is_zero() -> None:
    assert token_similarity("Of the", "Of the") == 0.0
    assert token_similarity("", "History") == 0.0


# soft_cardinality


def test_soft_cardinality_distinct_headings_count_one_each() -> None:
    assert soft_cardinality(["History", "Economy", "Climate"]) == 3.0


def test_soft_cardinality_identical_items_count_once() -> None:
    assert soft_cardinality(["x", "y", "z"], always_similar) == 1.0


def test_soft_cardinality_partial_overlap() -> None:
    # each row sums to 1 + 0.5, two rows: 2 / 1.5
    assert soft_cardinality(["Early history", "Late history"]) == pytest.approx(4 / 3)


def test_soft_cardinality_self_similarity_is_one() -> None:
    assert soft_cardinality(["The", "Of"], never_similar) == 2.0


def test_soft_cardinality_empty() -> None:
    assert soft_cardinality([]) == 0.0


# heading_soft_recall


def test_heading_soft_recall_half_of_gold_found() -> None:
    assert heading_soft_recall(["History", "Economy"], ["History"]) == 0.5


def test_heading_soft_recall_extra_predictions_do_not_hurt() -> None:
    assert heading_soft_recall(["History"], ["History", "Climate"]) == 1.0


def test_heading_soft_recall_partial_match() -> None:
    # |G| = 1, |P| = 1, |G + P| = 4 / 3, so |G ∩ P| = 2 / 3
    recall = heading_soft_recall(["Early history"], ["History of the city"])
    assert recall == pytest.approx(2 / 3)


def test_heading_soft_recall_clamped_to_one() -> None:
    # "Rain" and "Snow" each match the gold heading but not each other:
    # |G| = 1, |P| = 2, |G + P| = 3 / 7 + 3 / 5 + 3 / 5, so |G ∩ P| = 48 / 35
    assert heading_soft_recall(["Rain and snow"], ["Rain", "Snow"]) == 1.0


def test_heading_soft_recall_empty_predicted_is_zero() -> None:
    assert heading_soft_recall(["History"], []) == 0.0


def test_heading_soft_recall_empty_gold_is_full() -> None:
    assert heading_soft_recall([], ["History"]) == 1.0
    assert heading_soft_recall([], []) == 1.0


# citation_precision


def test_citation_precision_share_verified() -> None:
    assert citation_precision(3, 4) == 0.75


def test_citation_precision_nothing_claimed_is_full() -> None:
    assert citation_precision(0, 0) == 1.0


# duplicate_rate


def test_duplicate_rate_same_span() -> None:
    findings = [
        ("d#1", "It rained.", "Rain fell."),
        ("d#1", "It rained.", "Weather was wet."),
        ("d#2", "It rained.", "Storms came."),
        ("d#1", "It snowed.", "Snow fell."),
    ]
    assert duplicate_rate(findings) == 0.25


def test_duplicate_rate_same_claim_after_folding() -> None:
    findings = [
        ("d#1", "q1", "Rain  fell in\nMay."),
        ("d#2", "q2", "rain fell in may."),
        ("d#3", "q3", "Rain fell in June."),
    ]
    assert duplicate_rate(findings) == pytest.approx(1 / 3)


def test_duplicate_rate_all_distinct() -> None:
    assert duplicate_rate([("d#1", "q1", "c1"), ("d#2", "q2", "c2")]) == 0.0


def test_duplicate_rate_no_findings() -> None:
    assert duplicate_rate([]) == 0.0


# gold_headings


def test_gold_headings_drops_excluded_and_repeats() -> None:
    sections = [
        "Background",
        " Casualties ",
        "See also",
        "REFERENCES",
        "  external links",
        "background",
        "Notes",
        "Aftermath",
    ]
    assert gold_headings(sections) == ["Background", "Casualties", "Aftermath"]


def test_gold_headings_only_excluded_or_blank() -> None:
    assert gold_headings(["Further reading", "", "   "]) == []


def test_gold_headings_empty() -> None:
    assert gold_headings([]) == []
