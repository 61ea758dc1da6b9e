"""Where a facet's task goes: its agent, or its fallback while that one is open."""

from __future__ import annotations

from state.agents import AgentManifest
from state.circuit import Breaker

Route = tuple[str | None, str]
"""The agent to send a task to (None: none in service), and why not its own."""


def routes(
    agents: dict[str, AgentManifest], breakers: dict[str, Breaker]
) -> dict[str, Route]:
    """Where each agent's tasks go: to it, or to its fallback while it is open."""

    def closed(agent_id: str) -> bool:
        return not breakers.get(agent_id, Breaker()).open

    table: dict[str, Route] = {}
    for agent_id, manifest in agents.items():
        if closed(agent_id):
            table[agent_id] = (agent_id, "")
            continue
        fallback = manifest.fallback
        failures = breakers[agent_id].failures
        opened = f"{agent_id}'s circuit is open ({failures} failures in a row)"
        if fallback is not None and closed(fallback):
            table[agent_id] = (fallback, opened)
        else:
            table[agent_id] = (None, f"{opened} and no fallback agent is in service")
    return table
