"""The lead's own answer to a question one lookup answers: quoted sentences."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from runtime.extractive import best_sentences, idf_weights
from runtime.kb import KnowledgeBase, terms
from state.findings import Finding
from state.plan import DIRECT_FACET, LEAD_AGENT
from state.tasks import TaskResult, task_id_for

DIRECT_ANSWER_SENTENCES = 3


def answer_directly(kb: KnowledgeBase, question: str, trace_id: str) -> TaskResult:
    """One search, the best sentences quoted: the lead's own direct answer."""
    started, clock = datetime.now(UTC), time.perf_counter()
    hits = kb.search(question, 5)
    weights = idf_weights(kb, terms(question))
    extracts = best_sentences(
        [(h.passage_id, h.text) for h in hits], weights, DIRECT_ANSWER_SENTENCES
    )
    by_id = {h.passage_id: h for h in hits}
    findings = tuple(
        Finding(
            claim=e.sentence,
            quote=e.sentence,
            source=by_id[e.passage_id].source(),
            facet_ids=(DIRECT_FACET,),
            values=(question,),
            confidence=round(e.matched, 3),
        )
        for e in extracts
    )
    return TaskResult(
        task_id=task_id_for(trace_id, 0, DIRECT_FACET),
        agent_id=LEAD_AGENT,
        facet_id=DIRECT_FACET,
        round=0,
        values=(question,),
        status="success" if findings else "partial",
        findings=findings,
        started_at=started,
        execution_time_s=time.perf_counter() - clock,
        confidence=max((f.confidence for f in findings), default=0.0),
        steps=1,
    )
