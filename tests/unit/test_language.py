"""A word the knowledge base lacks is no refusal; a question in another language is."""

from __future__ import annotations

from pathlib import Path

import pytest

from roles.plan import NothingMatchesError, check_matches
from runtime.kb import KnowledgeBase, ingest
from runtime.language import kb_language
from tests.support import extractive, research

GERMAN = {
    "Hochwasser.md": "# Hochwasser an der Elbe\n\nIm Sommer trat die Elbe über "
    "die Ufer. Viele Häuser in der Altstadt standen unter Wasser, und die "
    "Feuerwehr brachte die Bewohner in Sicherheit.\n",
    "Sturm.md": "# Sturm über der Küste\n\nEin schwerer Sturm zog im Winter über "
    "die Küste. Bäume stürzten auf die Straßen, und der Strom fiel in vielen "
    "Dörfern für Tage aus.\n",
    "Dürre.md": "# Dürre im Osten\n\nNach Monaten ohne Regen vertrockneten die "
    "Felder. Die Bauern verloren einen großen Teil der Ernte, und die Flüsse "
    "führten so wenig Wasser wie nie zuvor.\n",
}


def test_a_word_the_knowledge_base_lacks_leaves_the_rest_to_search(
    freshwiki_kb: str,
) -> None:
    question = "Which films flopped or thrived at the box office in 2022?"
    kb = KnowledgeBase(freshwiki_kb)
    assert not kb.document_frequencies(["flopped", "thrived"])["flopped"]
    plan = research(question, extractive(freshwiki_kb, max_rounds=0))["plan"]
    assert plan.values and not plan.direct_answer


def test_a_question_in_another_language_is_refused_naming_both(
    freshwiki_kb: str,
) -> None:
    with pytest.raises(NothingMatchesError, match="'fr', the knowledge base as 'en'"):
        check_matches(
            KnowledgeBase(freshwiki_kb),
            "Quels films et albums de musique sont sortis en 2022?",
        )


def test_the_knowledge_bases_language_is_read_from_its_documents(
    tmp_path: Path,
) -> None:
    for name, text in GERMAN.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    ingest(tmp_path / "de.sqlite", [tmp_path])
    kb = KnowledgeBase(tmp_path / "de.sqlite")
    assert kb_language(kb) == "de"
    # "hagelte" and four more words are in no document; most of the question is
    check_matches(kb, "Wie viele Häuser standen unter Wasser, als es hagelte?")
    with pytest.raises(NothingMatchesError, match="no passage holds"):
        check_matches(kb, "Which houses in the old town stood under water?")
