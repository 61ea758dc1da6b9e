"""Models choose, code transcribes: plans and findings by reference, end to end.

Through the real `ChatOpenAI` against a replay server and the whole graph: a
lead that names what the knowledge base holds by number, subagents that point
at evidence handles and sentence numbers, and pointers at nothing shown.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from roles.grounding import holdings_for, round_robin
from roles.plan import CorpusPlanner
from runtime.kb import KnowledgeBase
from runtime.text import sentences
from subagents.contract import BAD_SENTENCES, UNKNOWN_EVIDENCE
from tests.openai_replay import ReplayServer, Reply, by_role, tool_call
from tests.unit.fakes import evidence_shown, values_in_brief
from tests.unit.test_replay import DISASTERS, Responder, endpoint, run_cli

__all__ = ["endpoint"]  # the fixture, shared with the other replay tests

LISTED = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)
PLANNED = ("Storm Eunice", "Cyclone Mocha", "2022 Pakistan floods", "Hurricane Idalia")


def numbers_of(listing: str, titles: tuple[str, ...]) -> list[int]:
    """The numbers a grounded plan prompt gives these titles."""
    numbered = {title: int(n) for n, title in LISTED.findall(listing)}
    return [numbered[t] for t in titles]


def plan_by_number(body: dict[str, Any]) -> Reply:
    """A lead that names four listed documents by number and adds one of its own."""
    asked = body["messages"][1]["content"]
    numbers = numbers_of(asked, PLANNED)
    plan = {
        "dimensions": [
            {"name": "event", "values": numbers},
            {"name": "economy", "values": ["Global recession of 2023"]},
        ],
        "facets": [
            {"title": str(n), "brief": "What happened and the damage.", "values": [n]}
            for n in numbers
        ]
        + [
            {
                "title": "Economy",
                "brief": "The recession.",
                "values": ["Global recession of 2023"],
            }
        ],
    }
    return Reply(content=json.dumps(plan))


def pointing_subagent(kb: KnowledgeBase) -> Responder:
    """Searches its value, then answers as the value decides.

    Storm Eunice: points at the first sentence shown. Cyclone Mocha: a handle
    never shown. 2022 Pakistan floods: a sentence out of range. Hurricane
    Idalia: a literal quote and passage id, as strong models write them.
    """

    def respond(body: dict[str, Any]) -> Reply:
        (value,) = values_in_brief(body["messages"][1]["content"])
        shown = [m for m in body["messages"] if m["role"] == "tool"]
        if not shown:
            return Reply(
                content=None,
                tool_calls=[tool_call("search", {"query": value}, "call_0")],
            )
        handle, number, _ = evidence_shown(shown[0]["content"])[0]
        if value == "Storm Eunice":
            found = {"evidence": handle, "sentences": [number]}
        elif value == "Cyclone Mocha":
            found = {"evidence": "E99", "sentences": [1]}
        elif value == "2022 Pakistan floods":
            found = {"evidence": handle, "sentences": [999]}
        else:
            lead = kb.passage("Hurricane_Idalia#0")
            assert lead is not None
            quote = sentences(lead.text)[0]
            found = {"claim": quote, "quote": quote, "passage_id": lead.passage_id}
        return Reply(content=json.dumps({"findings": [found]}))

    return respond


def test_plans_and_findings_by_reference_are_spelled_and_checked_by_code(
    endpoint: Callable[[Responder], ReplayServer], freshwiki_kb: str, tmp_path: Path
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    endpoint(
        by_role(
            {
                "plan": plan_by_number,
                "enumerate": Reply(content='{"dimensions": []}'),
                "subagent": pointing_subagent(kb),
                "write": Reply(content="Storm Eunice struck [1]."),
            }
        )
    )
    code, report, data = run_cli(freshwiki_kb, tmp_path, "--max-rounds", "0")
    planned = {d["name"]: d["values"] for d in data["plan"]["dimensions"]}
    assert planned["event"] == list(PLANNED)  # spelled by code
    assert planned["economy"] == ["Global recession of 2023"]
    rows = {r["value"]: r["status"] for r in data["coverage_table"]}
    assert rows["Storm Eunice"] == "covered"  # pointed: quote copied by code
    assert rows["Hurricane Idalia"] == "covered"  # literal quote, checked as ever
    for refused in ("Cyclone Mocha", "2022 Pakistan floods"):
        assert rows[refused] == "not covered"
    assert rows["Global recession of 2023"] == "not covered"
    eunice = next(f for f in data["findings"] if f["values"] == ["Storm Eunice"])
    passage = kb.passage(eunice["source"]["passage_id"])
    assert passage is not None and eunice["quote"] in sentences(passage.text)
    refused = data["summary"]["refused_by_reason"]
    assert refused == {UNKNOWN_EVIDENCE: 1, BAD_SENTENCES: 1}
    assert "2 refused before it" in report
    assert code == 0


def test_a_lead_that_plans_from_nothing_cannot_crowd_out_what_is_there(
    endpoint: Callable[[Responder], ReplayServer], freshwiki_kb: str, tmp_path: Path
) -> None:
    invented = {
        "dimensions": [{"name": "Revenue", "values": ["20%", "10%"]}],
        "facets": [{"title": "Revenue", "brief": "Growth.", "values": ["20%", "10%"]}],
    }
    endpoint(
        by_role(
            {
                "plan": Reply(content=json.dumps(invented)),
                "enumerate": Reply(content='{"dimensions": []}'),
                "subagent": Reply(content='{"findings": []}'),
                "write": Reply(content="Nothing [1]."),
            }
        )
    )
    _, _, data = run_cli(freshwiki_kb, tmp_path, "--max-rounds", "0")
    dimensions = data["plan"]["dimensions"]
    assert dimensions[1] == {"name": "Revenue", "values": ["20%", "10%"]}  # kept
    corpus = CorpusPlanner(KnowledgeBase(freshwiki_kb), 5)
    own = asyncio.run(corpus.plan(DISASTERS)).plan.values
    assert "Storm Eunice" in own and "2022 Pakistan floods" in own
    assert set(own) <= set(dimensions[0]["values"])  # the knowledge base's plan ...
    sent = {v for t in data["tasks"] for v in t["values"]}
    assert set(own) <= sent  # ... comes first and goes out


def test_what_the_lead_left_of_the_holdings_is_delegated_next(
    endpoint: Callable[[Responder], ReplayServer], freshwiki_kb: str, tmp_path: Path
) -> None:
    kb = KnowledgeBase(freshwiki_kb)
    held = holdings_for(kb, DISASTERS, 10)

    def one_by_number(body: dict[str, Any]) -> Reply:
        (number,) = numbers_of(body["messages"][1]["content"], ("Storm Eunice",))
        plan = {
            "dimensions": [{"name": "storm", "values": [number]}],
            "facets": [{"title": "Eunice", "brief": "Damage.", "values": [number]}],
        }
        return Reply(content=json.dumps(plan))

    def first_sentence(body: dict[str, Any]) -> Reply:
        (value,) = values_in_brief(body["messages"][1]["content"])
        shown = [m for m in body["messages"] if m["role"] == "tool"]
        if not shown:
            call = tool_call("search", {"query": value}, "call_0")
            return Reply(content=None, tool_calls=[call])
        handle, number, _ = evidence_shown(shown[0]["content"])[0]
        found = {"evidence": handle, "sentences": [number]}
        return Reply(content=json.dumps({"findings": [found]}))

    endpoint(
        by_role(
            {
                "plan": one_by_number,
                "enumerate": Reply(content='{"dimensions": []}'),
                "subagent": first_sentence,
                "write": Reply(content="Storm Eunice struck [1]."),
            }
        )
    )
    _, _, data = run_cli(freshwiki_kb, tmp_path, "--max-rounds", "1")
    by_round = {
        n: [v for t in data["tasks"] if t["round"] == n for v in t["values"]]
        for n in (0, 1)
    }
    assert by_round[0] == ["Storm Eunice"]  # the lead chose one ...
    left = [
        [held.items[n - 1] for n in numbers if held.items[n - 1] != "Storm Eunice"]
        for _, numbers in held.groups
    ]
    assert set(by_round[1]) == set(round_robin(left)[:5])  # ... code the rest
