"""Which agent takes a facet's task, and why: one interface, four strategies.

- capability: the words of the facet's title and values against each agent's
  declared domains. A domain few agents declare counts for more; on a tie the
  agent with fewer domains (the specialist) wins, and a year in the facet
  matching 'date' only breaks what is still tied. No match goes to the default
  agent.
- semantic: TF-IDF cosine similarity of the facet's title and values to each
  agent's description and domains.
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

from runtime.text import stems, years
from state.agents import AgentManifest
from state.circuit import Breaker
from state.plan import DEFAULT_AGENT, Facet

Route = tuple[str | None, str]
"""The agent to send a task to (None: none in service), and why."""


DATE = "date"
"""The domain an agent declares for dated things: matched by a year in a facet."""


def facet_words(facet: Facet) -> set[str]:
    """What a facet is about: the words of its title and values.

    The brief is left out: it restates the whole question, which every
    facet shares.
    """
    return stems(" ".join([facet.title, *facet.values]))


def is_dated(facet: Facet) -> bool:
    """Whether the facet's title or values name a year."""
    return bool(years(" ".join([facet.title, *facet.values])))


def domain_words(agent: AgentManifest) -> set[str]:
    """The words of an agent's declared domains."""
    return stems(" ".join(agent.domains))


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
        """The agent whose domains match the facet's subject most specifically."""
        asked = facet_words(facet) - {DATE}
        dated = {DATE} if is_dated(facet) else set()
        declared = [domain_words(a) for a in pool]
        idf = inverse_frequencies(declared)

        def rank(i: int) -> tuple[float, int, int, int]:
            subject = asked & declared[i]
            specific = -len(declared[i]) if subject else 0
            return sum(idf[w] for w in subject), specific, len(dated & declared[i]), -i

        best = max(range(len(pool)), key=rank)
        matched = sorted((asked | dated) & declared[best])
        if not matched:
            return pool[0].agent_id, "no agent's domains match; the default agent"
        return pool[best].agent_id, f"its domains match: {', '.join(matched)}"

    def semantic(self, facet: Facet, pool: list[AgentManifest]) -> tuple[str, str]:
        """The agent whose description and domains are most like the facet."""
        documents = [stems(a.description) | domain_words(a) for a in pool]
        idf = inverse_frequencies(documents)
        query = vector(facet_words(facet), idf)
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
