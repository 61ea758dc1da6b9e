"""Numbered evidence: one sentence splitter, blocks a model can point at."""

from __future__ import annotations

from roles.verify import quote_sentences, supports
from runtime.kb import KnowledgeBase
from runtime.text import ends_sentence, sentences
from state.findings import MIN_QUOTE_WORDS
from state.tasks import TaskDefinition
from subagents.evidence import excerpt, passage_of, record, shown_more
from subagents.reading import best_sentences
from subagents.tools import make_tools

AFL_FIRST = (
    "Geelong entered their 2022 campaign after a heavy defeat in the 2021 "
    "preliminary finals against eventual premiers Melbourne."
)


def test_sentences_end_at_stops_before_a_capital_and_at_line_breaks() -> None:
    text = 'It hit on 3 May. It killed "12 people." It cost $3 billion!\nNo stop here'
    assert sentences(text) == [
        "It hit on 3 May.",
        'It killed "12 people."',
        "It cost $3 billion!",
        "No stop here",
    ]
    assert sentences("  \n ") == []
    assert sentences("J. R. Smith led the U.S. Army. It won.") == [
        "J. R. Smith led the U.S. Army.",
        "It won.",
    ]
    assert sentences("It struck at 8:43 a.m. (PHT), e.g. Abra. It shook.") == [
        "It struck at 8:43 a.m. (PHT), e.g. Abra.",
        "It shook.",
    ]
    assert ends_sentence('it ended."  ') and not ends_sentence("it goes on")


def test_a_quote_that_keeps_its_full_stop_reads_no_further(freshwiki_kb: str) -> None:
    passage = KnowledgeBase(freshwiki_kb).passage("2022_AFL_Grand_Final#1")
    assert passage is not None and sentences(passage.text)[0] == AFL_FIRST
    held = quote_sentences(AFL_FIRST, passage.text)
    assert held == AFL_FIRST  # the next sentence, with its "not", stays out
    claim = "Geelong entered its 2022 campaign after a heavy preliminary final defeat."
    assert held is not None and supports(claim, held)


def test_a_quote_is_found_whatever_its_case_and_spacing() -> None:
    text = "First one here.\nThe storm  killed twelve people. Then it left."
    held = quote_sentences("the STORM killed twelve", text)
    assert held == "The storm  killed twelve people."
    assert quote_sentences("killed thirteen", text) is None


def test_evidence_blocks_number_sentences_and_reuse_handles(creative_kb: str) -> None:
    kb = KnowledgeBase(creative_kb)
    music, film = kb.passage("AI_in_music#0"), kb.passage("AI_in_film#0")
    assert music is not None and film is not None
    text, shown = record({"AI_in_film#0": [1]}, [excerpt(music), excerpt(film)])
    assert shown == {"AI_in_music#0": [1, 2], "AI_in_film#0": [1, 2]}
    first, second = text.split("\n\n")
    assert first.startswith("E2: AI in music > Composition\n[1] Music generators")
    assert "\n[2] Record labels sued" in first
    assert second.startswith("E1: AI in film")


def test_a_search_shows_the_sentences_most_like_its_query(freshwiki_kb: str) -> None:
    final = KnowledgeBase(freshwiki_kb).passage("2022_AFL_Grand_Final#1")
    assert final is not None
    shown = excerpt(final, "Lance Franklin career goal")
    assert len(shown["shown"]) == 3 and 9 in shown["shown"]
    text, _ = record({}, [shown])
    assert "\n[9] In a game made memorable by Lance Franklin" in text
    assert text.endswith("(13 more sentences: read E1)")  # the rest, one read away


def test_a_search_leaves_out_passages_too_short_to_quote(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    personnel = kb.passage("Those_Once_Loyal#11")
    assert personnel is not None  # "Personnel per liner notes."
    assert len(personnel.text.split()) < MIN_QUOTE_WORDS
    best = kb.search("Once Loyal", 1)[0]  # BM25 ranks the shortest passage first
    assert best.passage_id == personnel.passage_id
    task = TaskDefinition(
        task_id="t",
        run_id="r",
        agent_id="researcher",
        facet_id="f0",
        question="Which albums were released?",
        brief="Albums.",
        values=("Those Once Loyal",),
        acceptance="a quoted finding",
    )
    args = {"query": "Once Loyal", "task": task, "k": 3}
    shown = make_tools(kb)["search"].invoke(
        {"type": "tool_call", "id": "c", "name": "search", "args": args}
    )
    ids = [e["passage_id"] for e in shown.artifact]
    assert len(ids) == 3 and personnel.passage_id not in ids


def test_a_passage_shown_again_keeps_its_handle_and_adds_sentences() -> None:
    ledger = shown_more({"a#0": [2], "b#0": [1]}, {"b#0": [3], "c#0": [1]})
    assert list(ledger) == ["a#0", "b#0", "c#0"]  # E1, E2, E3
    assert ledger["b#0"] == [1, 3]
    assert passage_of("E3", ledger) == "c#0" and passage_of("E4", ledger) is None


def test_extracts_carry_their_sentence_number() -> None:
    passage = ["Too short.", "A long enough sentence about the flood and its damage."]
    (extract,) = best_sentences([("p#0", passage)], {"flood": 1.0}, 3)
    assert (extract.number, extract.sentence) == (2, passage[1])
