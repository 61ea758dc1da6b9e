"""Runs on a thread with a checkpointer: each question starts afresh."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from graphs.research import builder
from tests.support import extractive


def test_second_question_on_a_thread_does_not_inherit_the_first(
    freshwiki_kb: str,
) -> None:
    graph = builder.compile(checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}}
    context = extractive(freshwiki_kb, max_rounds=1)

    async def ask(question: str) -> dict[str, Any]:
        await graph.ainvoke({"question": question}, config, context=context)
        return dict((await graph.aget_state(config)).values)

    first = asyncio.run(ask("Which natural disasters struck in 2022 and 2023?"))
    second = asyncio.run(ask("Who won the 2022 UEFA Champions League final?"))
    assert not set(first["results"]) & set(second["results"])
    assert [g.round for g in second["coverage"]] == list(range(len(second["coverage"])))
    delegated = [e for e in second["events"] if e.kind == "DELEGATE"]
    assert len(delegated) == len(second["results"]) - second["plan"].direct_answer
    cited = {f.source.doc_id for f in second["findings"]}
    assert cited and not cited & {"2022_Pakistan_floods", "Storm_Eunice"}
