from __future__ import annotations

from langgraph.runtime import Runtime

from nodes.verify import verify
from runtime.context import Context
from runtime.kb import KnowledgeBase
from state.findings import Finding


def finding(kb: KnowledgeBase, passage_id: str, quote: str) -> Finding:
    passage = kb.passage(passage_id)
    assert passage is not None
    return Finding(
        claim="c",
        quote=quote,
        source=passage.source(),
        facet_ids=("f0",),
        values=("v",),
    )


def test_verify_keeps_verbatim_quotes_and_drops_others(freshwiki_kb: str) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    passage = kb.search("Pakistan floods killed", 1)[0]
    sentence = passage.text.split(". ")[0]
    real = finding(kb, passage.passage_id, "  " + sentence.upper().replace(" ", "\n "))
    invented = finding(kb, passage.passage_id, "The floods were caused by a volcano.")
    elsewhere = finding(kb, "Storm_Eunice#0", sentence)
    unknown = finding(kb, passage.passage_id, sentence).model_copy(
        update={"source": passage.source().model_copy(update={"passage_id": "nope#1"})}
    )
    out = verify(
        {"question": "q", "findings": [real, invented, elsewhere, unknown]},
        Runtime(context=Context(kb_path=freshwiki_kb)),
    )
    assert [f.quote for f in out["findings"]] == [real.quote]
    assert out["findings"][0].verified is True
    assert out["dropped"] == 3
