"""Routing: each strategy picks the expected agent on a fixed set of facets."""

from __future__ import annotations

from pathlib import Path

import pytest

from state.agents import AgentManifest
from state.circuit import Breaker
from state.plan import Facet
from subagents.registry import load_registry
from subagents.routing import Router
from tests.support import extractive, research

POET = AgentManifest(
    agent_id="poet",
    description="Finds poems, poets and what critics wrote about their poetry.",
    domains=("poetry", "poem", "sonnet"),
    tools=("search", "read"),
    fallback="extractor",
    system_prompt="You research poems.",
)
FACETS = [
    Facet(id="f0", title="2022 Pakistan floods", brief="The floods.", values=("a",)),
    Facet(id="f1", title="Sonnets", brief="Who wrote the sonnets.", values=("b",)),
    Facet(id="f2", title="Bread", brief="How bread is baked.", values=("c",)),
]


def agents() -> dict[str, AgentManifest]:
    return {**load_registry(), "poet": POET}


def routed(strategy: str, breakers: dict[str, Breaker] | None = None) -> list[str]:
    router = Router(agents(), breakers or {}, strategy)
    return [str(router.assign(facet)[0]) for facet in FACETS]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("capability", ["events_researcher", "poet", "researcher"]),
        ("semantic", ["events_researcher", "poet", "researcher"]),
        ("load", ["researcher", "events_researcher", "poet"]),
        ("round_robin", ["researcher", "events_researcher", "poet"]),
    ],
)
def test_each_strategy_picks_its_agent(strategy: str, expected: list[str]) -> None:
    assert routed(strategy) == expected


def test_the_reason_is_given() -> None:
    router = Router(agents(), {}, "capability")
    agent, why = router.assign(FACETS[0])
    assert agent == "events_researcher"
    assert why == "its domains match: date, flood"
    assert router.assign(FACETS[2])[1] == "no agent's domains match; the default agent"


def test_an_open_circuit_is_skipped_for_its_fallback() -> None:
    opened = {"researcher": Breaker(failures=3, open=True)}
    assert routed("capability", opened) == ["events_researcher", "poet", "extractor"]
    # round robin never picks the open agent
    assert "researcher" not in routed("round_robin", opened)


def test_a_facet_the_plan_assigned_keeps_its_agent() -> None:
    facet = FACETS[0].model_copy(update={"agent_id": "poet"})
    assert Router(agents(), {}, "capability").assign(facet) == (
        "poet",
        "assigned in the plan",
    )


def test_a_user_drops_a_definition_in_a_folder_and_sees_it_chosen(
    tmp_path: Path, creative_kb: str
) -> None:
    (tmp_path / "music_critic.md").write_text(
        "---\nname: music_critic\ndescription: Researches music and musicians.\n"
        "domains: [music, song, composer]\ntools: [search, read]\n"
        "fallback: extractor\n---\nYou research music.\n"
    )
    state = research(
        "How is AI used in music, film and writing?",
        extractive(creative_kb, agents_dir=str(tmp_path), max_rounds=0),
    )
    delegated = {
        str(e.fields["values"]): e.fields
        for e in state["events"]
        if e.kind == "DELEGATE"
    }
    music = next(f for v, f in delegated.items() if "music" in v.lower())
    assert music["agent"] == "music_critic"
    assert str(music["route"]).startswith("its domains match: music")
    assert any(f["agent"] != "music_critic" for f in delegated.values())
