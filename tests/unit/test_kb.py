"""The knowledge base: ingest of every supported format, search, passages."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from runtime.corpus import CorpusError
from runtime.kb import KnowledgeBase, KnowledgeBaseError, ingest, match_query


def write(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    write(
        docs,
        "glaciers.md",
        "# Glaciers\n\nIce that moves.\n\n## Retreat\n\n"
        "Alpine glaciers lost a tenth of their volume in two summers.\n"
        "\n### Swiss data\n\nSwiss glaciers shrank fastest in 2022.\n"
        "\n## References\n\nIgnored section text.\n",
    )
    write(
        docs,
        "Tide_pools.txt",
        "Tide_pools\n\nPools left by the sea [3].\n\n"
        "# Life\n\nAnemones and crabs live in tide pools.\n",
    )
    write(
        docs,
        "volcano.html",
        "<html><head><style>p{}</style></head><body>"
        "<h1>Volcanoes</h1><p>Mountains that erupt.</p><h2>Lava</h2>"
        "<p>Basaltic lava flows are fluid.</p><script>var x;</script></body></html>",
    )
    write(
        docs,
        "Storm.json",
        json.dumps(
            {
                "title": "Storm_Xavier",
                "url": "https://example.org/storm",
                "summary": "A windstorm hit the coast [1].",
                "content": [
                    {
                        "section_title": "Damage",
                        "section_content": [
                            {"sentence": "Roofs were torn off.", "refs": []},
                            {"sentence": "Power failed for days.", "refs": []},
                        ],
                    }
                ],
            }
        ),
    )
    write(docs, "notes.csv", "ignored,file\n")
    return docs


def test_every_format_is_split_at_its_headings(corpus: Path, tmp_path: Path) -> None:
    kb_path = tmp_path / "kb.sqlite"
    result = ingest(kb_path, [corpus])
    assert (result.documents, result.skipped) == (4, ())
    kb = KnowledgeBase(kb_path)
    assert kb.size == result.passages
    sections = {
        (p.title, p.section)
        for p in kb.search(
            "the a glaciers tide lava roofs anemones swiss ice pools", 50
        )
    }
    assert ("Glaciers", "Retreat") in sections
    assert ("Glaciers", "Retreat > Swiss data") in sections
    assert ("Tide pools", "Life") in sections
    assert ("Volcanoes", "Lava") in sections
    assert ("Storm Xavier", "Damage") in sections
    assert not kb.search("Ignored section")


def test_passages_keep_source_metadata_and_drop_reference_marks(
    corpus: Path, tmp_path: Path
) -> None:
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [corpus])
    kb = KnowledgeBase(kb_path)
    storm = kb.search("roofs torn", 1)[0]
    assert storm.url == "https://example.org/storm"
    assert storm.doc_id == "Storm"
    assert storm.text == "Roofs were torn off. Power failed for days."
    pools = kb.search("pools sea", 1)[0]
    assert "[3]" not in pools.text
    assert pools.url is not None and pools.url.startswith("file://")


def test_reingest_replaces_a_document(corpus: Path, tmp_path: Path) -> None:
    kb_path = tmp_path / "kb.sqlite"
    ingest(kb_path, [corpus])
    write(corpus, "glaciers.md", "# Glaciers\n\nNow only one passage about moraines.\n")
    ingest(kb_path, [corpus / "glaciers.md"])
    kb = KnowledgeBase(kb_path)
    assert [p.section for p in kb.search("glaciers", 10) if p.doc_id == "glaciers"] == [
        "Summary"
    ]


def test_bm25_ranks_title_matches_first(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    top = kb.rank_documents("Storm Eunice damage", 3)
    assert top[0].title == "Storm Eunice"
    assert kb.search("eunice", 3, op="AND", doc_id="Storm_Eunice")
    assert not kb.search("eunice", 3, doc_id="OceanGate")


def test_a_greek_plural_finds_its_singular_and_back(freshwiki_kb: str) -> None:
    """Porter stems "crises" and "crisis" apart; a search for one finds the other."""
    kb = KnowledgeBase(freshwiki_kb)
    crisis = "October_2022_United_Kingdom_government_crisis"
    assert crisis in {p.doc_id for p in kb.rank_documents("government crises", 3)}
    assert kb.search("Truss crises", 3, op="AND", doc_id=crisis)
    assert match_query(["crises", "analysis", "bases"]) == (
        '("crises" OR "crisis") OR ("analysis" OR "analyses") OR "bases"'
    )


def test_search_treats_fts_syntax_as_words(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    assert kb.search('floods" OR NEAR(* "pakistan', 3)
    assert kb.search("?!*", 3) == []


def test_an_initialism_written_with_full_stops_is_searched_as_its_letters(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write(docs, "show.md", "# Noon\n\nE.A.T. is a noontime variety show.\n")
    write(docs, "tea.md", "# Tea\n\nPeople eat and drink tea at noon.\n")
    write(docs, "letters.md", "# Letters\n\nThe letters a, e and t.\n")
    ingest(tmp_path / "kb.sqlite", [docs])
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    assert [hit.title for hit in kb.search("E.A.T.", 5)] == ["Noon"]
    assert [hit.title for hit in kb.search("E.A.T", 5)] == ["Noon"]


def test_shipped_corpus_is_indexed_whole(freshwiki_kb: str) -> None:
    with closing(sqlite3.connect(freshwiki_kb)) as db:
        docs, wiki = db.execute(
            "SELECT count(*), sum(url LIKE 'https://en.wikipedia.org/wiki/%')"
            " FROM documents"
        ).fetchone()
    assert docs == wiki == 100
    kb = KnowledgeBase(freshwiki_kb)
    assert kb.size > 1000
    idalia = kb.passage("Hurricane_Idalia#0")
    assert idalia is not None and idalia.title == "Hurricane Idalia"


def test_empty_folder_and_missing_path_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="does not exist"):
        ingest(tmp_path / "kb.sqlite", [tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusError, match="no .md"):
        ingest(tmp_path / "kb.sqlite", [tmp_path / "empty"])
    with pytest.raises(KnowledgeBaseError, match="no knowledge base"):
        KnowledgeBase(tmp_path / "kb.sqlite")


def test_same_names_in_subfolders_are_distinct_documents(tmp_path: Path) -> None:
    for folder in ("a", "b"):
        (tmp_path / "docs" / folder).mkdir(parents=True)
        write(
            tmp_path / "docs" / folder,
            "notes.md",
            f"# Notes {folder}\n\nText {folder}.\n",
        )
    assert ingest(tmp_path / "kb.sqlite", [tmp_path / "docs"]).documents == 2
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    assert {p.doc_id for p in kb.search("notes", 5)} == {"a/notes", "b/notes"}


def test_documents_that_would_share_an_id_are_told_apart(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    write(docs, "storm.md", "# Storm\n\nWind.\n")
    write(docs, "storm.txt", "Storm\n\nRain.\n")
    kb_path = tmp_path / "kb.sqlite"
    assert ingest(kb_path, [docs]).documents == 2
    ingest(kb_path, [docs])
    kb = KnowledgeBase(kb_path)
    assert kb.size == 2
    assert kb.search("wind", 1)[0].doc_id == "storm"
    assert re.fullmatch(r"storm~[0-9a-f]{8}", kb.search("rain", 1)[0].doc_id)


def test_knowledge_base_path_may_hold_uri_characters(
    corpus: Path, tmp_path: Path
) -> None:
    odd = tmp_path / "a #1 ?x" / "kb.sqlite"
    ingest(odd, [corpus])
    assert KnowledgeBase(odd).search("glaciers", 1)
    assert sorted(p.name for p in odd.parent.iterdir()) == ["kb.sqlite"]


def test_a_document_is_of_a_period_its_title_opening_or_section_names(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "Old_mill.md",
        "# Old mill\n\nThe old mill, a building of stone, was\nfinished in 1850."
        "\n\nIt was restored in 2022."
        "\n\n## History\n\nIt milled grain.\n\n## 2023 fire\n\nA fire burned it.\n",
    )
    ingest(tmp_path / "kb.sqlite", [tmp_path])
    kb = KnowledgeBase(tmp_path / "kb.sqlite")
    by_section = {p.section: p for p in kb.search("mill grain fire restored", 5)}
    # The opening paragraph is hard-wrapped, its year on its second line; a
    # later paragraph of the lead only mentions 2022: the mill is not of 2022.
    assert not kb.in_period(by_section["Summary"], {"2022"})
    assert kb.in_period(by_section["Summary"], {"1850"})
    assert not kb.in_period(by_section["History"], {"2023"})
    assert kb.in_period(by_section["2023 fire"], {"2023"})
    assert kb.in_period(by_section["History"], set())
