"""A lead plans from what the knowledge base holds: it chooses, code spells."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from roles.enumerate import ModelEnumerator
from roles.grounding import (
    SEVERAL_KINDS,
    Holdings,
    dated_title,
    holdings_for,
    interleaved,
    leads_reached,
    reached_by_part,
    reached_documents,
)
from roles.plan import CorpusPlanner, ModelPlanner
from runtime.kb import RELEVANT_SHARE, KnowledgeBase, ingest
from state.plan import CoveragePlan
from tests.unit.fakes import scripted

DISASTERS = (
    "Which natural disasters and severe weather events struck in 2022 and 2023, "
    "and what damage did each cause?"
)
HELD = Holdings(("Storm Eunice", "Cyclone Mocha"), (("Storms", (1, 2)),))


def test_holdings_are_numbered_in_the_order_they_are_listed(freshwiki_kb: str) -> None:
    held = holdings_for(KnowledgeBase(freshwiki_kb), DISASTERS, 8)
    assert 2 <= len(held.items) <= 8 and "Storm Eunice" in held.items
    numbers = [n for _, group in held.groups for n in group]
    assert numbers == list(range(1, len(held.items) + 1))
    listed = re.findall(r"^(\d+)\. (.+)$", held.listing(), re.MULTILINE)
    assert [(int(n), t) for n, t in listed] == list(enumerate(held.items, 1))
    assert "Storm Eunice" not in held.listing(leave_out=["storm eunice"])


def test_a_document_of_the_period_by_one_section_is_named_with_it(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    town = kb.search("Lahaina wildfire 2023", 1, doc_id="Lahaina,_Hawaii")[0]
    storm = kb.search("Hurricane Idalia landfall", 1, doc_id="Hurricane_Idalia")[0]
    assert town.section.endswith("2023 wildfire")
    assert dated_title(kb, town, {"2022", "2023"}) == "Lahaina, Hawaii: 2023 wildfire"
    assert dated_title(kb, town, set()) == "Lahaina, Hawaii"  # no period asked
    assert dated_title(kb, storm, {"2023"}) == "Hurricane Idalia"  # its lead dates it


def test_code_spells_what_a_lead_names() -> None:
    assert (
        HELD.spell(2)
        == HELD.spell("2")
        == HELD.spell(" cyclone MOCHA")
        == ("Cyclone Mocha")
    )
    assert HELD.spell("Typhoon Nanmadol") == "Typhoon Nanmadol"  # its own value
    assert HELD.spell("2023") == "2023"  # a year, not an item number
    assert HELD.spell(7) is None  # a number that names nothing listed
    assert Holdings().spell(2023) == "2023"  # nothing listed: numbers are words
    assert HELD.spell(" storms") is None  # a heading of the list is no value
    kinds = Holdings(
        ("Storm Eunice",), (("Documents with sections Impact, Aftermath", (1,)),)
    )
    assert kinds.spell("Impact, Aftermath") is None  # nor words of one
    assert kinds.spell("Aftermath of the storm") == "Aftermath of the storm"


def test_a_value_written_short_of_one_item_is_that_item() -> None:
    held = Holdings(
        ("2022 Welsh Open (snooker)", "2022 Pakistan floods", "2022 Brazil floods"),
        (("Events", (1, 2, 3)),),
    )
    assert held.spell("2022 Welsh Open") == "2022 Welsh Open (snooker)"
    assert held.spell("2022 floods") == "2022 floods"  # two items hold it: neither
    assert held.spell("Welsh") == "Welsh"  # one word says too little


def planned(answer: dict[str, Any], kb: str) -> list[str]:
    corpus = CorpusPlanner(KnowledgeBase(kb), 6)
    lead = ModelPlanner(scripted(answer), 6, 60.0, corpus)
    plan = asyncio.run(lead.plan(DISASTERS)).plan
    return [v for d in plan.dimensions for v in d.values]


def test_values_named_by_number_are_the_listed_titles(freshwiki_kb: str) -> None:
    held = holdings_for(KnowledgeBase(freshwiki_kb), DISASTERS, 12)
    answer = {
        "dimensions": [{"name": "event", "values": [1, 2]}],
        "facets": [{"title": "All", "brief": "Damage.", "values": [1, 2]}],
    }
    assert planned(answer, freshwiki_kb) == list(held.items[:2])


def test_a_plan_from_nothing_gets_the_knowledge_base_plan_first(
    freshwiki_kb: str,
) -> None:
    answer = {
        "dimensions": [{"name": "Revenue", "values": ["20%", "10%"]}],
        "facets": [{"title": "Money", "brief": "Growth.", "values": ["20%", "10%"]}],
    }
    values = planned(answer, freshwiki_kb)
    assert values[-2:] == ["20%", "10%"] and "Storm Eunice" in values[:-2]


def test_a_direct_answer_is_not_turned_into_a_plan_here(freshwiki_kb: str) -> None:
    # the gap check, not the planner, turns a direct answer into delegation
    assert planned({"direct_answer": True}, freshwiki_kb) == []


def test_a_facet_title_copied_from_the_prompt_is_written_by_code(
    freshwiki_kb: str,
) -> None:
    header = "What the knowledge base holds for it (name these by number):"
    answer = {
        "dimensions": [{"name": "event", "values": [1, 2]}],
        "facets": [
            {"title": f"{header} 1, 2", "brief": header, "values": [1]},
            {"title": "Storm damage", "brief": "Damage.", "values": [2]},
        ],
    }
    corpus = CorpusPlanner(KnowledgeBase(freshwiki_kb), 6)
    plan = asyncio.run(ModelPlanner(scripted(answer), 6, 60.0, corpus).plan(DISASTERS))
    first, second = plan.plan.facets
    assert first.title == first.values[0] and header not in first.brief
    assert first.values[0] in first.brief
    assert (second.title, second.brief) == ("Storm damage", "Damage.")


def test_a_dimension_named_after_a_listed_document_takes_its_values_kind(
    freshwiki_kb: str,
) -> None:
    held = holdings_for(KnowledgeBase(freshwiki_kb), DISASTERS, 12)
    storms = next(numbers for _, numbers in held.groups if len(numbers) > 2)
    first, second, third = (held.items[n - 1] for n in storms[:3])
    a_run_of_its_words = " ".join(third.split()[-2:])  # "Pakistan floods"
    answer = {
        "dimensions": [
            # a document's name, or a run of its words, is no dimension
            {"name": third, "values": [storms[0]]},
            {"name": a_run_of_its_words, "values": [storms[1], storms[2]]},
            {"name": "Damage", "values": [len(held.items)]},
        ],
        "facets": [
            {"title": "Storms", "brief": "Damage.", "values": list(storms[:3])},
            {"title": "Other", "brief": "Damage.", "values": [len(held.items)]},
        ],
    }
    corpus = CorpusPlanner(KnowledgeBase(freshwiki_kb), 6)
    lead = ModelPlanner(scripted(answer), 6, 60.0, corpus)
    plan = asyncio.run(lead.plan(DISASTERS)).plan
    kind = next(label for label, numbers in held.groups if numbers == storms)
    named = {d.name: d.values for d in plan.dimensions}
    # both take their values' kind and become one; the third keeps its name
    assert named == {kind: (first, second, third), "Damage": (held.items[-1],)}


def test_holdings_list_what_the_question_is_about_by_its_lead(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    mourned = "Which notable people died in 2022 and 2023, and how were they mourned?"
    funeral = "Death and funeral of Pope Benedict XVI"
    # its lead says what the question asks about ...
    assert funeral in [lead.title for lead in leads_reached(kb, mourned)]
    # ... though passages of six other documents say more of its words
    ranked = interleaved(reached_by_part(kb, mourned, 12))
    assert funeral not in [doc.title for doc in ranked[:6]]
    held = holdings_for(kb, mourned, 6)
    assert funeral in held.items and len(held.items) == 6
    assert held.items[0] == ranked[0].title  # the best passage's document leads


def test_a_value_listed_again_stays_where_it_was_listed_first(
    freshwiki_kb: str,
) -> None:
    # a small model's reply: the whole list under every dimension and facet
    everything = [1, 2, 3, 4]
    answer = {
        "dimensions": [
            {"name": "Events", "values": everything},
            {"name": "Places", "values": [*everything, 5]},
            {"name": "Dates", "values": everything},
        ],
        "facets": [
            {"title": "Events", "brief": "What happened.", "values": everything},
            {"title": "Places", "brief": "Where.", "values": [*everything, 5]},
            {"title": "Dates", "brief": "When.", "values": everything},
        ],
    }
    kb = KnowledgeBase(freshwiki_kb)
    lead = ModelPlanner(scripted(answer), 6, 60.0, CorpusPlanner(kb, 6))
    plan = asyncio.run(lead.plan(DISASTERS)).plan
    held = holdings_for(kb, DISASTERS, 6)
    named = {d.name: d.values for d in plan.dimensions}
    assert named == {"Events": held.items[:4], "Places": (held.items[4],)}
    # no title of titles, no facet left empty, none sharing a value
    titles = {f.title.split(" (")[0] for f in plan.facets}
    assert titles == {"Events", "Places"}
    assert sum(len(f.values) for f in plan.facets) == len(plan.values) == 5


def test_holdings_tell_a_documents_name_and_the_kind_of_values() -> None:
    assert HELD.names_an_item("cyclone mocha") and HELD.names_an_item("Storm Eunice")
    assert not HELD.names_an_item("Mocha")  # one word names no item
    assert not HELD.names_an_item("Cyclone damage")
    assert HELD.names_an_item("Storms: Storm Eunice")  # a line of the list
    # a heading with whatever its items became after it (seen on a real run)
    assert HELD.copies_a_heading("Storms: 2022 West Java地震, Storm")
    assert not HELD.copies_a_heading("Storms") and not HELD.copies_a_heading("Storm")
    assert HELD.dimension_name("Storms: 7. Storm Eunice", ["Storm Eunice"]) == "Storms"
    assert HELD.dimension_name("Storms: 7. Lahaina", ["Lahaina"]) == SEVERAL_KINDS
    assert HELD.dimension_name("Wind damage", ["Lahaina"]) == "Wind damage"
    assert HELD.kind_of(["Storm Eunice", "Cyclone Mocha"]) == "Storms"
    # an item written with words added, or an ending changed, is that item
    assert HELD.spell("2022 Cyclone Mocha") == "Cyclone Mocha"
    assert HELD.spell("Storms Eunice") == "Storm Eunice"
    assert HELD.spell("Mocha") == "Mocha"
    assert HELD.spell("Storm damage") == "Storm damage"
    assert HELD.kind_of(["Storm Eunice", "Typhoon Nanmadol"]) is None  # not listed


def test_the_enumerator_names_a_dimension_named_after_a_document_by_kind(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    held = holdings_for(kb, DISASTERS, 12)
    storms = next(numbers for _, numbers in held.groups if len(numbers) > 2)
    kind = next(label for label, numbers in held.groups if numbers == storms)
    direct = CoveragePlan.direct(DISASTERS)
    # the plan names nothing, so the enumerator is shown the same numbers
    answer = {"dimensions": [{"name": held.items[storms[0] - 1], "values": [1, 2]}]}
    lead = ModelEnumerator(scripted(answer), 6, 60.0, CorpusPlanner(kb, 6))
    found = asyncio.run(lead.missing(direct, [])).values
    # the document itself is not refused as holding its dimension's name
    assert found == {kind: [held.items[0], held.items[1]]}


def test_the_enumerator_leaves_out_a_planned_value_written_with_words_added(
    freshwiki_kb: str,
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    plan = asyncio.run(CorpusPlanner(kb, 6).plan(DISASTERS)).plan
    first = plan.values[0]
    answer = {
        "dimensions": [
            {"name": "Storms", "values": [f"2022 {first}", "Typhoon Nanmadol"]}
        ]
    }
    lead = ModelEnumerator(scripted(answer), 6, 60.0)
    found = asyncio.run(lead.missing(plan, [])).values
    assert found == {"Storms": ["Typhoon Nanmadol"]}


def test_one_document_far_above_the_rest_does_not_raise_the_bar_for_all(
    tmp_path: Path,
) -> None:
    texts = {
        "Builder Group": "Builder Group is a group of companies and businesses. Its "
        "companies build; its businesses let offices; the companies and "
        "businesses are owned by one family.",
        "Deep Sub": "Deep Sub is a company that makes submersibles; it is owned by "
        "its founder.",
        "Leaf Tea": "Leaf Tea is a tea brand. The company sells green tea and is "
        "owned by a cosmetics firm.",
        **{f"Place {n}": "A village by a river, with a mill." for n in "AB"},
    }
    for title, text in texts.items():
        page = tmp_path / f"{title.replace(' ', '_')}.md"
        page.write_text(f"# {title}\n\n{text}\n")
    ingest(tmp_path / "kb.sqlite", [tmp_path])
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    question = "Which companies and businesses are there, and who owns them?"
    best, runner_up, third = kb.rank_documents(question, 3)
    # the builder's summary fits the question's words far better than any other
    assert third.score < RELEVANT_SHARE * best.score
    assert third.score >= RELEVANT_SHARE * runner_up.score
    reached = [doc.title for doc in reached_documents(kb, question, 10)]
    assert reached == ["Builder Group", "Deep Sub", "Leaf Tea"]
    assert holdings_for(kb, question, 10).items == tuple(reached)
