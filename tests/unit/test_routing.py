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


FLOOD_RESEARCHER = AgentManifest(
    agent_id="flood_researcher",
    description="Researches floods and heavy rain.",
    domains=("floods", "flooding", "rain"),
    tools=("search", "read"),
    fallback="extractor",
    system_prompt="You research floods.",
)


@pytest.mark.parametrize("strategy", ["capability", "semantic"])
def test_a_specialist_takes_its_facet_from_the_generalist(strategy: str) -> None:
    team = {**agents(), "flood_researcher": FLOOD_RESEARCHER}
    router = Router(team, {}, strategy)
    assert router.assign(FACETS[0])[0] == "flood_researcher"
    storms = Facet(
        id="f3", title="Storms", brief="2022 floods.", values=("Storm Eunice",)
    )
    assert router.assign(storms)[0] == "events_researcher"


def test_a_year_alone_still_finds_the_agent_of_dated_things() -> None:
    facet = Facet(id="f4", title="What happened in 2023", brief="x", values=("y",))
    router = Router(agents(), {}, "capability")
    assert router.assign(facet) == ("events_researcher", "its domains match: date")


def test_semantic_routing_reads_the_facet_not_the_question_briefs_repeat() -> None:
    question = "How did floods, poems and sonnets shape 2022?"
    facets = [
        Facet(id="a", title="Sonnets", brief=question, values=("Shakespeare",)),
        Facet(id="b", title="Pakistan floods", brief=question, values=("Sindh",)),
    ]
    router = Router(agents(), {}, "semantic")
    assert [router.assign(f)[0] for f in facets] == ["poet", "events_researcher"]


def test_a_users_flood_researcher_takes_the_floods_of_the_disasters_question(
    tmp_path: Path, freshwiki_kb: str
) -> None:
    (tmp_path / "flood_researcher.md").write_text(
        "---\nname: flood_researcher\ndescription: Researches floods and heavy rain.\n"
        "domains: [floods, flooding, rain]\ntools: [search, read]\n"
        "fallback: extractor\n---\nYou research floods.\n"
    )
    state = research(
        "Which natural disasters and severe weather events struck in 2022 and "
        "2023, and what damage did each cause?",
        extractive(freshwiki_kb, agents_dir=str(tmp_path), max_rounds=0),
    )
    taken = {
        str(e.fields["values"]): e.fields["agent"]
        for e in state["events"]
        if e.kind == "DELEGATE"
    }
    floods = [agent for values, agent in taken.items() if "flood" in values.lower()]
    assert floods == ["flood_researcher"]
    assert "events_researcher" in taken.values()
