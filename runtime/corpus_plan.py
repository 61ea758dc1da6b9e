"""The extractive lead's plan: the documents, or sections, a question reaches."""

from __future__ import annotations

from runtime.kb import RELEVANT_SHARE, KnowledgeBase, Passage, terms
from state.plan import CoveragePlan, Dimension, facet_for_value, lint_plan


def plan_from_corpus(kb: KnowledgeBase, question: str, max_facets: int) -> CoveragePlan:
    """Extractive plan: the documents the question reaches are its values.

    When one document stands out, its relevant sections are the values; when
    only one section does, the question is answered directly.
    """
    docs = kb.rank_documents(question, max_facets * 4)
    if not docs:
        return CoveragePlan.direct(question)
    relevant = [d for d in docs if d.score >= RELEVANT_SHARE * docs[0].score]
    if len(relevant) > 1:
        values = tuple(d.title for d in relevant[:max_facets])
        return _one_dimension_plan(question, "subject", values)
    sections = relevant_sections(kb, question, relevant[0])
    if len(sections) <= 1:
        return CoveragePlan.direct(question)
    values = tuple(f"{relevant[0].title}: {s}" for s in sections[:max_facets])
    return _one_dimension_plan(question, f"aspect of {relevant[0].title}", values)


def relevant_sections(kb: KnowledgeBase, question: str, doc: Passage) -> list[str]:
    """Top-level sections of `doc` that the question's own words reach."""
    title_words = set(terms(doc.title))
    asked = " ".join(t for t in terms(question) if t not in title_words)
    hits = kb.search(asked, 50, doc_id=doc.doc_id)
    if not hits:
        return []
    best = hits[0].score
    return list(
        dict.fromkeys(
            h.section.split(" > ")[0] for h in hits if h.score >= RELEVANT_SHARE * best
        )
    )


def _one_dimension_plan(
    question: str, dimension: str, values: tuple[str, ...]
) -> CoveragePlan:
    taken: set[str] = set()
    return lint_plan(
        CoveragePlan(
            question=question,
            dimensions=(Dimension(name=dimension, values=values),),
            facets=tuple(facet_for_value(question, v, taken) for v in values),
        )
    )
