"""Gates: deterministic checks every tool call passes before it runs.

In order: the agent's allow-list (the tools it was given: its built-ins, its
user tools and its MCP servers' tools), its deny-list, the dangerous-tool rule
(every tool but the knowledge base's `search` and `read` reaches outside it),
the prerequisite rule (`read` only evidence an earlier `search` of the same
subagent showed), then the user's own gates named in the context. Every call,
whatever its tool, passes them in this order. The first
gate that objects denies the call: the subagent gets a tool message saying why,
nothing raises, and its result records the denial (a GATE event). A dangerous
tool is denied unless the configuration approves it; with
`dangerous_tools="ask"` the denial goes to a person through the branch's
escalation, whose `retry` approves it for that task.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from runtime.imports import ImportRefusedError, allowed_attribute
from runtime.reliability import shorten
from state.agents import AgentManifest
from state.denials import Denial
from state.tasks import TaskDefinition
from subagents.evidence import passage_of
from subagents.tools import SAFE_TOOLS

GATE_PACKAGES_ENV = "DELEGATOR_GATE_PACKAGES"
"""Top-level packages whose callables the context may name as gates."""


@dataclass(frozen=True)
class ToolCallCheck:
    """What a gate sees of one tool call.

    Attributes:
        agent: The calling subagent's definition.
        task: The task it works on.
        tool: The tool it asks for.
        args: The arguments it gives.
        found: The passage ids its earlier searches showed.
        evidence: Those passages in the order of their handles (E1, E2, ...).
    """

    agent: AgentManifest
    task: TaskDefinition
    tool: str
    args: Mapping[str, Any]
    found: frozenset[str]
    evidence: tuple[str, ...] = ()


Gate = Callable[[ToolCallCheck], str | None]
"""A check: the reason to deny the call, or None to let it through."""


def deny_list(call: ToolCallCheck) -> str | None:
    """None of the tools the agent's definition disallows."""
    if call.agent.allows(call.tool):
        return None
    return f"{call.agent.agent_id} is not allowed {call.tool}"


def read_after_search(call: ToolCallCheck) -> str | None:
    """`read` only evidence that an earlier search of this subagent showed."""
    if call.tool != "read":
        return None
    if passage_of(str(call.args.get("handle")), call.evidence) is not None:
        return None
    return "read only the handle (E1, E2, ...) of a passage one of your searches showed"


@dataclass(frozen=True)
class GatePolicy:
    """The configuration the gates apply.

    Attributes:
        dangerous: 'deny' a dangerous tool, or 'ask' a person.
        approved: Dangerous tools the configuration approves.
        user_gates: The context's 'module:function' gates, comma-separated.
    """

    dangerous: str = "deny"
    approved: frozenset[str] = frozenset()
    user_gates: str = ""


class Gates:
    """The ordered gates of one agent under one policy."""

    def __init__(
        self, agent: AgentManifest, policy: GatePolicy, given: frozenset[str]
    ) -> None:
        self.agent, self.policy, self.given = agent, policy, given
        self.chain: list[tuple[str, Gate]] = [
            ("allow-list", self.allow_list),
            ("deny-list", deny_list),
            ("dangerous-tool", self.dangerous),
            ("prerequisite", read_after_search),
            *user_gates(policy.user_gates),
        ]

    def allow_list(self, call: ToolCallCheck) -> str | None:
        """Only the tools the agent was given by its definition."""
        if call.tool in self.given:
            return None
        return f"{call.agent.agent_id} may use only {', '.join(sorted(self.given))}"

    def dangerous(self, call: ToolCallCheck) -> str | None:
        """A dangerous tool only if the configuration or a person approved it."""
        approved = self.policy.approved | set(call.task.approved_tools)
        if call.tool in SAFE_TOOLS or call.tool in approved:
            return None
        return f"{call.tool} reaches outside the knowledge base and is not approved"

    def check(
        self,
        task: TaskDefinition,
        tool: str,
        args: Mapping[str, Any],
        evidence: Iterable[str],
    ) -> Denial | None:
        """The first gate's denial of this call, or None if every gate lets it by.

        `evidence` is the subagent's ledger: the passages its tools showed.
        """
        shown = tuple(evidence)
        call = ToolCallCheck(self.agent, task, tool, args, frozenset(shown), shown)
        for rule, gate in self.chain:
            reason = gate(call)
            if reason is not None:
                return Denial(
                    tool=tool,
                    rule=rule,
                    reason=reason,
                    args=shorten(json.dumps(dict(args), default=str), 200),
                    needs_person=rule == "dangerous-tool"
                    and self.policy.dangerous == "ask",
                )
        return None


@functools.cache
def user_gates(spec: str) -> tuple[tuple[str, Gate], ...]:
    """The gates a context names ('module:function', comma-separated).

    Only modules of the top-level packages `DELEGATOR_GATE_PACKAGES` lists are
    imported: a caller of the server cannot make it import anything else.

    Raises:
        ImportRefusedError: a gate cannot be loaded, or is not callable.
    """
    gates: list[tuple[str, Gate]] = []
    for name in (n.strip() for n in spec.split(",") if n.strip()):
        gate = allowed_attribute(name, GATE_PACKAGES_ENV, "gate")
        if not callable(gate):
            raise ImportRefusedError(f"gate {name!r} is not callable")
        gates.append((name, gate))
    return tuple(gates)
