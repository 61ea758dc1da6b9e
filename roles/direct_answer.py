"""Answer directly: the lead's own quoted answer to a question one lookup answers.

Both modes answer the same way, by extractive reading: one search, the best
sentences quoted. The search reads only the documents a plan could have taken
as values: of the question's period and in the place it names. The findings are
verified like any subagent's; they cover no value, since the question itself is
never one.
"""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime

from roles.grounding import in_scope
from runtime.kb import KnowledgeBase, Passage
from runtime.text import period_of, sentences, terms
from state.plan import DIRECT_FACET, LEAD_AGENT, CoveragePlan
from state.tasks import TaskDefinition, TaskResult, task_id_for
from subagents.reading import best_sentences, idf_weights, quoted_findings

DIRECT_ANSWER_SENTENCES = 3
DIRECT_ANSWER_PASSAGES = 5
_SEARCH_DEPTH = 50
"""Passages searched for those of the question's period."""


def answer_directly(
    kb: KnowledgeBase, plan: CoveragePlan, run_id: str, timeout_s: float
) -> TaskResult:
    """The result of the lead's direct answer to a direct plan's question."""
    task = TaskDefinition(
        task_id=task_id_for(run_id, 0, DIRECT_FACET),
        run_id=run_id,
        agent_id=LEAD_AGENT,
        facet_id=DIRECT_FACET,
        question=plan.question,
        brief=plan.question,
        values=(),
        acceptance="Quoted sentences that answer the question.",
        timeout_s=timeout_s,
    )
    started, clock = datetime.now(UTC), time.perf_counter()
    hits = searched(kb, plan.question)
    weights = idf_weights(kb, terms(plan.question))
    extracts = best_sentences(
        [(h.passage_id, sentences(h.text)) for h in hits],
        weights,
        DIRECT_ANSWER_SENTENCES,
    )
    findings = quoted_findings(extracts, kb, facet_id=DIRECT_FACET, values=task.values)
    return TaskResult.of(
        task,
        findings=findings,
        errors=[],
        started_at=started,
        seconds=time.perf_counter() - clock,
        steps=1,
    )


def searched(kb: KnowledgeBase, question: str) -> list[Passage]:
    """The best passages for `question` of its period and in the place it names."""
    period = period_of(question)
    hits = kb.search(question, _SEARCH_DEPTH, among=in_scope(kb, question))
    dated = (h for h in hits if kb.in_period(h, period))
    return list(itertools.islice(dated, DIRECT_ANSWER_PASSAGES))
