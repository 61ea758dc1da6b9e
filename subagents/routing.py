"""Which agent takes a facet's task, and why: one interface, four strategies.

- capability: the words of the facet's title and values (and 'date' when they
  name a year) against each agent's declared domains; no match goes to the
  default agent.
- semantic: TF-IDF cosine similarity of the facet to each agent's description.
- load: the agent with the fewest tasks in flight.
- round_robin: each agent in turn.

Strategies choose among the agents whose definitions are routable. An agent
whose circuit is open is skipped for its fallback, or if that is out of service
too, for the strategy's choice among the agents still in service. A facet the
plan assigned to an agent keeps it, under the same rule.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

from runtime.kb import stems, years
from state.agents import AgentManifest
from state.circuit import Breaker
from state.plan import DEFAULT_AGENT, Facet

Route = tuple[str | None, str]
"""The agent to send a task to (None: none in service), and why."""


def facet_text(facet: Facet) -> str:
    """What a facet asks for, as one text: its title, brief and values."""
    return " ".join([facet.title, facet.brief, *facet.values])


def facet_needs(facet: Facet) -> set[str]:
    """What a facet is about: the words of its title and values.

    'date' is added when they name a year. The brief is left out: it often
    restates the whole question.
    """
    text = " ".join([facet.title, *facet.values])
    return stems(text) | ({"date"} if years(text) else set())


class Router:
    """Assigns facets to agents by one strategy, counting what it assigned."""

    def __init__(
        self,
        agents: dict[str, AgentManifest],
        breakers: dict[str, Breaker],
        strategy: str,
    ) -> None:
        self.agents, self.breakers, self.strategy = agents, breakers, strategy
        self.routable = sorted(
            (a for a in agents.values() if a.routable),
            key=lambda a: (a.agent_id != DEFAULT_AGENT, a.agent_id),
        )
        self.in_flight: Counter[str] = Counter()
        self.turn = 0

    def closed(self, agent_id: str) -> bool:
        """Whether the agent's circuit lets tasks through."""
        return not self.breakers.get(agent_id, Breaker()).open

    def assign(self, facet: Facet) -> Route:
        """The agent for the facet's next task, and why."""
        if facet.agent_id != DEFAULT_AGENT and facet.agent_id in self.agents:
            agent, why = facet.agent_id, "assigned in the plan"
        elif self.routable:
            agent, why = self.chosen(facet, self.routable)
        else:
            return None, "no agent definition is routable"
        routed: Route = (agent, why)
        if not self.closed(agent):
            routed = self.around(facet, agent)
        if routed[0] is not None:
            self.in_flight[routed[0]] += 1
        self.turn += 1
        return routed

    def around(self, facet: Facet, agent_id: str) -> Route:
        """Who takes the task of an agent whose circuit is open, and why."""
        failures = self.breakers[agent_id].failures
        opened = f"{agent_id}'s circuit is open ({failures} failures in a row)"
        fallback = self.agents[agent_id].fallback
        if fallback is not None and self.closed(fallback):
            return fallback, f"{opened}; its fallback"
        in_service = [a for a in self.routable if self.closed(a.agent_id)]
        if not in_service:
            return None, f"{opened} and no other agent is in service"
        agent, why = self.chosen(facet, in_service)
        return agent, f"{opened}; {why}"

    def chosen(self, facet: Facet, pool: list[AgentManifest]) -> tuple[str, str]:
        """The agent the strategy picks in the pool, and why."""
        if self.strategy == "semantic":
            return self.semantic(facet, pool)
        if self.strategy == "load":
            agent = min(pool, key=lambda a: self.in_flight[a.agent_id])
            held = self.in_flight[agent.agent_id]
            return agent.agent_id, f"fewest tasks in flight ({held})"
        if self.strategy == "round_robin":
            agent = pool[self.turn % len(pool)]
            return agent.agent_id, f"round robin, turn {self.turn}"
        return self.capability(facet, pool)

    def capability(self, facet: Facet, pool: list[AgentManifest]) -> tuple[str, str]:
        """The agent whose domains share most words with the facet."""
        asked = facet_needs(facet)
        scored = [(sorted(asked & stems(" ".join(a.domains))), a) for a in pool]
        # a named subject outweighs a year, which only says the facet is dated
        matched, best = max(
            scored, key=lambda s: (len(set(s[0]) - {"date"}), len(s[0]))
        )
        if not matched:
            return pool[0].agent_id, "no agent's domains match; the default agent"
        return best.agent_id, f"its domains match: {', '.join(matched)}"

    def semantic(self, facet: Facet, pool: list[AgentManifest]) -> tuple[str, str]:
        """The agent whose description is most similar to the facet (TF-IDF)."""
        documents = [stems(a.description) for a in pool]
        idf = inverse_frequencies(documents)
        query = vector(stems(facet_text(facet)), idf)
        scores = [cosine(query, vector(d, idf)) for d in documents]
        best = max(range(len(scores)), key=lambda i: scores[i])
        return pool[best].agent_id, f"most similar description ({scores[best]:.2f})"


def inverse_frequencies(documents: list[set[str]]) -> dict[str, float]:
    """Smoothed inverse document frequency of each word of the documents."""
    counts = Counter(w for d in documents for w in d)
    n = len(documents)
    return {w: math.log((n + 1) / (c + 1)) + 1 for w, c in counts.items()}


def vector(bag: Iterable[str], idf: dict[str, float]) -> dict[str, float]:
    """A bag of words weighted by inverse document frequency."""
    return {w: idf[w] for w in bag if w in idf}


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    """The cosine similarity of two weighted bags of words."""
    dot = sum(v * b.get(w, 0.0) for w, v in a.items())
    norm = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0
