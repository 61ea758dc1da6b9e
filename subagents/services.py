"""A run's services, built once from its context and reached the same way everywhere.

The knowledge base, the lead's model, the agent definitions, each agent's loop
(its driver on its model, its tools and gates): every node, the
CLI and the benchmarks ask `services(ctx)` for them instead of building their
own. Runs with the same settings share one bundle. An agent's tools are the
built-ins it names, the user's tools (`package.module:attribute`) and its MCP
servers' tools; an MCP server starts the first time an agent that uses it runs.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import get_args

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool

from runtime.context import Context
from runtime.kb import KnowledgeBase, knowledge_base
from runtime.mcp import McpServerError, server_tools
from runtime.models import ModelSettings, load_chat_model
from state.agents import MCP_PREFIX, AgentManifest, AgentModel
from subagents.extractive_agent import ByRule
from subagents.gates import GatePolicy, Gates, user_gates
from subagents.json_agent import JsonSteps
from subagents.llm_agent import ToolCalling
from subagents.loop import Driver, Loop
from subagents.registry import DefinitionError, load_registry
from subagents.tools import SAFE_TOOLS, as_evidence, make_tools
from subagents.user_tools import is_user_tool, user_tool


class ToolUnavailableError(ValueError):
    """A tool an agent names that cannot be had here; the message says why."""


KEPT = 16
"""Bundles kept for runs of different settings; the oldest is let go first."""


def gate_policy(ctx: Context) -> GatePolicy:
    """The gate settings of a run's context."""
    return GatePolicy(
        dangerous=ctx.dangerous_tools, approved=ctx.approved, user_gates=ctx.gates
    )


@dataclass(frozen=True)
class Services:
    """What a run uses, built once.

    Attributes:
        kb: The knowledge base.
        lead: The lead's model; None in extractive mode.
        agents: The agent definitions, built-in and the user's, by id.
        models: The model settings each kind of agent model names.
        policy: What the gates apply.
        routing: How facets are given to agents.
        findings_per_value: Findings an extractive subagent cuts per value.
        mcp_config: The MCP configuration file its agents' servers come from.
    """

    kb: KnowledgeBase
    lead: BaseChatModel | None
    agents: Mapping[str, AgentManifest]
    models: Mapping[AgentModel, ModelSettings]
    policy: GatePolicy
    routing: str
    findings_per_value: int
    mcp_config: str = ""
    loops: dict[str, Loop] = field(default_factory=dict, compare=False)

    async def loop(self, agent_id: str) -> Loop:
        """The agent's loop on its model (by rule when it names none); built once.

        Raises:
            McpServerError: an MCP server it uses cannot be configured or started.
        """
        built = self.loops.get(agent_id)
        if built is None:
            manifest = self.agents[agent_id]
            tools = await self.tools(manifest)
            built = self.loops[agent_id] = await asyncio.to_thread(
                agent_loop,
                manifest,
                self.models[manifest.model],
                self.kb,
                self.findings_per_value,
                self.policy,
                tools,
            )
        return built

    async def prepare_tools(self) -> None:
        """Build the loop of every agent with tools from outside the knowledge base.

        Its MCP servers start now, so one that cannot start fails the run
        before any task is sent.

        Raises:
            McpServerError: a server cannot be configured or started.
            ToolUnavailableError: a tool it names cannot be had here.
        """
        for agent_id, manifest in self.agents.items():
            if set(manifest.allowed_tools) - SAFE_TOOLS or manifest.servers:
                await self.loop(agent_id)

    async def tools(self, manifest: AgentManifest) -> dict[str, BaseTool]:
        """The tools the agent names, by the names a model calls them by."""
        every = make_tools(self.kb)
        allowed = manifest.allowed_tools
        if "web_search" in allowed and "web_search" not in every:
            raise ToolUnavailableError(
                f"{manifest.agent_id} names web_search, which needs TAVILY_API_KEY "
                "(or name an MCP search server's tool instead)"
            )
        tools = {t: every[t] for t in allowed if t in every}
        for spec in filter(is_user_tool, allowed):
            found = user_tool(spec)
            tools[found.name] = as_evidence(found, found.name)
        for server in manifest.servers:
            if not self.mcp_config:
                raise McpServerError(
                    f"{manifest.agent_id} uses MCP server {server!r}, and no MCP "
                    "configuration is given (--mcp-config)"
                )
            whole = server in manifest.mcp_servers or f"{MCP_PREFIX}{server}" in allowed
            for name, tool in (await server_tools(self.mcp_config, server)).items():
                if (whole or name in allowed) and manifest.allows(name):
                    tools[name] = as_evidence(tool, name)
        return tools

    def model_of(self, agent_id: str) -> BaseChatModel | None:
        """The model an agent runs on; None when it runs by rule."""
        return load_chat_model(self.models[self.agents[agent_id].model])


def agent_loop(
    manifest: AgentManifest,
    settings: ModelSettings,
    kb: KnowledgeBase,
    findings_per_value: int,
    policy: GatePolicy,
    tools: Mapping[str, BaseTool],
) -> Loop:
    """What the agent brings to the loop on its model: driver, tools, gates."""
    model = load_chat_model(settings)
    driver: Driver
    if model is None:
        driver = ByRule(manifest, findings_per_value)
    elif settings.protocol == "json":
        driver = JsonSteps(model, list(tools.values()))
    else:
        driver = ToolCalling(model, list(tools.values()))
    return Loop(manifest, driver, tools, Gates(manifest, policy, frozenset(tools)), kb)


def built(ctx: Context) -> Services:
    """A run's services, from its context; a definition or gate error raises here."""
    ctx.check_paths(follow_links=True)
    agents = load_registry(ctx.agents_dir)
    user_gates(ctx.gates)  # a gate that cannot be loaded fails the run here
    if ctx.verifier and ctx.verifier not in agents:
        raise DefinitionError(f"the verifier {ctx.verifier!r} names no definition")
    return Services(
        kb=knowledge_base(ctx.kb_path),
        lead=load_chat_model(ctx.model("lead")),
        agents=agents,
        models={kind: ctx.agent_model(kind) for kind in get_args(AgentModel)},
        policy=gate_policy(ctx),
        routing=ctx.routing,
        findings_per_value=ctx.findings_per_value,
        mcp_config=ctx.mcp_config_file,
    )


def key(ctx: Context) -> Hashable:
    """What a bundle is built from: runs that agree on it share one."""
    return (
        ctx.kb_path,
        ctx.agents_dir,
        ctx.model("lead"),
        ctx.model("subagent"),
        gate_policy(ctx),
        ctx.verifier,
        ctx.routing,
        ctx.findings_per_value,
        ctx.mcp_config_file,
    )


_built: OrderedDict[Hashable, Services] = OrderedDict()


async def services(ctx: Context) -> Services:
    """The services of a run with this context: built in a worker thread once."""
    wanted = key(ctx)
    bundle = _built.get(wanted)
    if bundle is None:
        bundle = await asyncio.to_thread(built, ctx)
        _built[wanted] = bundle
        while len(_built) > KEPT:
            _built.popitem(last=False)
    return bundle
