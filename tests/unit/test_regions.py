"""A question scoped to a region reaches the documents in its countries."""

from __future__ import annotations

from pathlib import Path

import pytest

from roles.enumerate import probe
from roles.grounding import (
    holdings_for,
    in_scope,
    reached_by_country,
    reached_documents,
)
from roles.plan import CorpusPlanner, NothingMatchesError, check_matches
from runtime.kb import RELEVANT_SHARE, KnowledgeBase, ingest
from runtime.regions import countries_named, countries_placed, region_named

EUROPE = "What happened in Europe in 2022 and 2023?"


@pytest.mark.parametrize(
    ("question", "continents", "countries"),
    [
        (EUROPE, {"Europe"}, set()),
        ("Which European clubs won titles?", {"Europe"}, set()),
        (
            "What films came out of Asian and African studios?",
            {"Asia", "Africa"},
            set(),
        ),
        ("What happened across north america?", {"North America"}, set()),
        ("Which South American clubs won titles?", {"South America"}, set()),
        (
            "What happened in the United Kingdom and Hungary?",
            set(),
            {"United Kingdom", "Hungary"},
        ),
        ("Which films from India came out in Asia?", {"Asia"}, {"India"}),
    ],
)
def test_a_question_names_continents_by_name_or_adjective_and_countries_by_name(
    question: str, continents: set[str], countries: set[str]
) -> None:
    region = region_named(question)
    assert region is not None
    assert (set(region.continents), set(region.countries)) == (continents, countries)


@pytest.mark.parametrize(
    "question",
    [
        "What happened in 2022 and 2023?",
        # a city, a state or a country's adjective names other things as often
        "What did Taylor Swift and Elizabeth Holmes do in Kansas?",
        "Which cyclones crossed the Indian Ocean?",
        "Which American films won awards at Latin American festivals?",
    ],
)
def test_a_question_naming_no_continent_or_country_has_no_region(question: str) -> None:
    assert region_named(question) is None


def test_a_region_question_is_asked_again_of_a_country() -> None:
    region = region_named("Which European clubs won titles in Europe?")
    assert region is not None
    assert region.put("Which European clubs won titles in Europe?", "Spain") == (
        "Which Spain clubs won titles in Spain?"
    )
    assert region.holds("Hungary") and not region.holds("United States")


@pytest.mark.parametrize(
    ("text", "countries"),
    [
        ("The championships were held in Montpellier, France.", {"France"}),
        (
            "She lay in state at Westminster Hall in London, England.",
            {"United Kingdom"},
        ),
        ("He was shot in Minneapolis, Minnesota.", {"United States"}),
        ("Elections were held in Hungary and Poland.", {"Hungary", "Poland"}),
        ("The final was played at the Stade de France.", {"France"}),
        ("In Vatican City the pope died.", {"Vatican"}),
        ("Queen Elizabeth II died in September.", set()),
        ("On 3 March 2022, a storm struck.", set()),
        ("The brand sells green tea.", set()),
        ("Sardar is a 2022 Indian Tamil-language film.", {"India"}),
        ("E.A.T. is a Philippine noontime variety show.", {"Philippines"}),
        ("Amir Locke, a Black American man, was shot.", {"United States"}),
        ("The album won a Spanish-language award.", set()),
        ("He played in The Pirates of Penzance.", set()),
        ("The final went to Perry, who beat Trump.", set()),
        ("The storm moved over Central and Northern Europe.", set()),
        ("A gunman opened fire in Monterey Park.", {"United States"}),
        ("The tournament was played in Newport.", {"United Kingdom"}),
    ],
)
def test_a_text_names_countries_by_their_names_cities_and_states(
    text: str, countries: set[str]
) -> None:
    assert countries_named(text) == countries


def kb_of(tmp_path: Path, texts: dict[str, str]) -> KnowledgeBase:
    """A knowledge base of one document a title, its text its lead."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for title, text in texts.items():
        (folder / f"{title.replace(' ', '_')}.md").write_text(f"# {title}\n\n{text}\n")
    ingest(tmp_path / "kb.sqlite", [folder])
    return KnowledgeBase(tmp_path / "kb.sqlite")


def titles_listed(kb: KnowledgeBase, question: str) -> set[str]:
    """The titles of the documents the question's holdings list."""
    return {item.split(":")[0] for item in holdings_for(kb, question, 10).items}


@pytest.fixture
def places_kb(tmp_path: Path) -> KnowledgeBase:
    texts = {
        "2023 Emilia-Romagna floods": "In May 2023, floods struck Emilia-Romagna in "
        "Italy; rivers burst their banks and towns were evacuated.",
        "2022 Hungarian election": "Parliamentary elections were held in Hungary "
        "on 3 April 2022; the governing party won a fourth term.",
        "Storm Hilda": "Storm Hilda struck London, England, in February 2022, "
        "felling trees and cutting power.",
        "2022 European Tour of the Rangers": "The Rangers, a band from Houston, "
        "Texas, played a European tour in 2022 that happened to be about Europe: "
        "Europe, Europe, Europe.",
        "2023 Harbour Fire": "In 2023 a fire happened at the harbour of Oakland, "
        "California, and burned for two days.",
        "2022 Paris Marathon": "The 2022 Paris Marathon happened in Paris, France, "
        "in April 2022: what happened there happened fast, and it happened again "
        "in 2023.",
        "Sardar (2022 film)": "Sardar is a 2022 Indian spy film; its sequel "
        "was announced in 2023.",
    }
    return kb_of(tmp_path, texts)


def test_a_region_question_lists_the_documents_in_its_countries(
    places_kb: KnowledgeBase,
) -> None:
    by_words = {d.title for d in reached_documents(places_kb, EUROPE, 10)}
    # by its words alone, the question reaches what says "Europe" and "happened"
    assert {"2022 European Tour of the Rangers", "2023 Harbour Fire"} <= by_words
    listed = set(holdings_for(places_kb, EUROPE, 10).items)
    assert listed == {
        "2023 Emilia-Romagna floods",
        "2022 Hungarian election",
        "Storm Hilda",
        "2022 Paris Marathon",
    }
    plan = CorpusPlanner(places_kb, 5)._plan(EUROPE)
    assert set(plan.values) == listed


def test_a_country_question_lists_the_documents_in_that_country(
    places_kb: KnowledgeBase,
) -> None:
    france = "What happened in France in 2022 and 2023?"
    assert in_scope(places_kb, france) == frozenset({"2022_Paris_Marathon"})
    assert titles_listed(places_kb, france) == {"2022 Paris Marathon"}
    region = region_named(france)
    assert region is not None and region.put(france, "Spain") == france
    assert region.holds("France") and not region.holds("Italy")


def test_a_country_question_is_not_only_about_documents_that_say_its_name(
    tmp_path: Path,
) -> None:
    uk = "the United Kingdom's government"
    texts = {
        "July 2022 United Kingdom government crisis": f"In July 2022 {uk} fell "
        f"apart in London: a crisis of the United Kingdom, {uk} and its ministers.",
        "October 2022 United Kingdom government crisis": f"In October 2022 {uk} "
        f"fell again in London, the United Kingdom's second crisis of {uk}.",
        "Storm Hilda": "What happened in February 2022: Storm Hilda struck "
        "London, England, felling trees and cutting power.",
        "Queue for the Queen": "In September 2022 a queue happened in London, "
        "England, as mourners waited for days.",
    }
    kb = kb_of(tmp_path, texts)
    question = "What happened in the United Kingdom in 2022?"
    # asked with its name, the two documents that say it set the bar
    assert len(reached_documents(kb, question, 10, among=in_scope(kb, question))) == 2
    assert set(holdings_for(kb, question, 10).items) == set(texts)
    region = region_named(question)
    assert region is not None
    assert region.unnamed(question) == "What happened in in 2022?"
    assert region.unnamed("Did the United Kingdom win?") == "Did win?"


CRASH = (
    "2023 plane crash\n"
    "On 23 August 2023 a business jet crashed north of Moscow. Russian "
    "investigators opened a case; United States officials blamed Russian "
    "agents, and a Russian court heard it."
)
CYCLONE = (
    "Cyclone Mocha\n"
    "Cyclone Mocha was a cyclone in the North Indian Ocean which struck Myanmar. "
    "The India Meteorological Department tracked it, and Indian ships helped."
)


@pytest.mark.parametrize(
    ("lead", "countries"),
    [
        (CRASH, {"Russia"}),
        (CYCLONE, {"Myanmar", "India"}),
        (
            "Storm\nA storm struck London, Germany and Denmark.",
            {"United Kingdom", "Germany", "Denmark"},
        ),
        (
            "Treaty\nThe treaty was signed in Rome.\nFrance, Spain and Italy kept it.",
            {"Italy", "France", "Spain"},
        ),
    ],
)
def test_a_document_is_where_its_opening_says_or_its_lead_mostly_says(
    lead: str, countries: set[str]
) -> None:
    assert countries_placed(lead) == countries


def test_a_country_named_in_passing_does_not_put_a_document_in_it(
    tmp_path: Path,
) -> None:
    texts = {
        "2023 plane crash": CRASH.split("\n", 1)[1],
        "2023 Lahaina wildfire": "In August 2023 a wildfire burned Lahaina, Hawaii, "
        "in the United States.",
    }
    kb = kb_of(tmp_path, texts)
    question = "What happened in the United States in 2023?"
    assert in_scope(kb, question) == frozenset({"2023_Lahaina_wildfire"})
    assert titles_listed(kb, question) == {"2023 Lahaina wildfire"}


@pytest.mark.parametrize("place", ["Chad", "Antarctica"])
def test_a_question_about_a_place_no_document_is_in_is_refused(
    places_kb: KnowledgeBase, place: str
) -> None:
    question = f"What happened in {place} in 2022?"
    # its words alone reach the documents that say "happened" and "2022"
    assert reached_documents(places_kb, question, 10)
    with pytest.raises(NothingMatchesError, match=f"no document is in {place}"):
        check_matches(places_kb, question)


def test_a_knowledge_base_that_names_no_place_scopes_no_question(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for title in ("Studio lighting", "Film grain"):
        lead = f"{title} is a craft of film studios."
        history = "Studios in France used it in their films for decades."
        (folder / f"{title.replace(' ', '_')}.md").write_text(
            f"# {title}\n\n{lead}\n\n## History\n\n{history}\n"
        )
    ingest(tmp_path / "kb.sqlite", [folder])
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    question = "How did studios in France use film grain?"
    assert in_scope(kb, question) is None
    check_matches(kb, question)  # not refused: nothing here is in any country
    assert holdings_for(kb, question, 10).items


def test_a_document_is_in_the_country_its_adjective_names(
    places_kb: KnowledgeBase,
) -> None:
    asia = "Which films came out of Asia in 2022?"
    assert in_scope(places_kb, asia) == frozenset({"Sardar_(2022_film)"})
    assert titles_listed(places_kb, asia) == {"Sardar (2022 film)"}


def test_a_region_question_is_asked_of_each_country_most_documents_first(
    places_kb: KnowledgeBase,
) -> None:
    rankings = reached_by_country(places_kb, EUROPE, 10)
    assert [[d.title for d in ranking] for ranking in rankings] == [
        ["2022 Paris Marathon"],
        ["2022 Hungarian election"],
        ["2023 Emilia-Romagna floods"],
        ["Storm Hilda"],
    ]
    assert reached_by_country(places_kb, "What happened in 2022?", 10) == []


def test_the_probe_proposes_the_documents_of_each_country_of_the_region(
    places_kb: KnowledgeBase,
) -> None:
    scope = in_scope(places_kb, EUROPE)
    assert scope is not None and len(scope) == 4
    ranked = places_kb.rank_documents(EUROPE)
    in_region = [d for d in ranked if d.doc_id in scope]
    # by the question's words, the marathon that "happened" outscores the rest twice
    assert in_region[0].title == "2022 Paris Marathon"
    assert all(d.score < RELEVANT_SHARE * in_region[0].score for d in in_region[1:])
    found = {d.title for d in probe(places_kb, EUROPE, known=(), names=())}
    assert found == {
        "2023 Emilia-Romagna floods",
        "2022 Hungarian election",
        "Storm Hilda",
        "2022 Paris Marathon",
    }
    named = probe(places_kb, EUROPE, known=(), names=["Storm Hilda"])
    assert "Storm Hilda" not in {d.title for d in named}
    assert in_scope(places_kb, "What happened in 2022?") is None
