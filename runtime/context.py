"""Run configuration: LangGraph's `context_schema`, set from Studio, the CLI or env."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Any, Literal, TypeVar, get_args, get_origin, get_type_hints

from runtime.models import (
    EXTRACTIVE,
    ModelSettings,
    Protocol,
    Role,
    check_credentials,
    resolve_spec,
)
from runtime.paths import allowed
from state.agents import AgentModel
from state.budget import Budget

T = TypeVar("T", bool, int, float, str)
ProtocolChoice = Literal["auto", "tools", "json"]
Escalation = Literal["interrupt", "skip"]
Routing = Literal["capability", "semantic", "load", "round_robin"]
DangerousTools = Literal["deny", "ask"]
ROUTINGS: tuple[str, ...] = get_args(Routing)
APPROVABLE_ENV = "DELEGATOR_APPROVABLE_TOOLS"
"""Dangerous tools a run's settings may approve: the operator's choice, not a
caller's (an approval from `DELEGATOR_APPROVED_TOOLS` itself is the operator's)."""
MCP_CONFIG_ENV = "DELEGATOR_MCP_CONFIG"
"""The operator's MCP configuration: when set, the only one a run may name."""
AGENT_DIRS_ENV = "DELEGATOR_AGENT_DIRS"
"""Folders an `agents_dir` must lie in, if set (see `runtime.paths`)."""
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


MAX_NUMBER = 2**31 - 1
"""The largest number any setting takes: a count, a budget or seconds."""


class ConfigError(ValueError):
    """A setting out of range or not of its type."""


KB_DIRS_ENV = "DELEGATOR_KB_DIRS"
"""Folders a `kb_path` must lie in, if set (see `runtime.paths`)."""
_KINDS: dict[object, str] = {
    bool: "true or false",
    int: "whole number",
    float: "number",
    str: "string",
}


def checked(name: str, value: object, declared: Any, limits: dict[str, Any]) -> object:
    """`value` as the field `name` of type `declared` holds it, or a ConfigError.

    `limits` are the field's declared `minimum` or `above` (a bound it must
    exceed); a `Literal` type's arguments are its choices.
    """
    if get_origin(declared) is Literal:
        choices = get_args(declared)
        if value not in choices:
            raise ConfigError(
                f"{name} must be one of {', '.join(choices)}, not {value!r}"
            )
        return value
    if declared is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, declared) or (
        declared is not bool and isinstance(value, bool)
    ):
        raise ConfigError(
            f"{name} must be a {_KINDS[declared]}, not {type(value).__name__} {value!r}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, not {value!r}")
    if "minimum" in limits and value < limits["minimum"]:
        least = limits["minimum"]
        bound = "0 or more" if least == 0 else f"at least {least:g}"
        raise ConfigError(f"{name} must be {bound}")
    if "above" in limits and value <= limits["above"]:
        raise ConfigError(f"{name} must be positive")
    if isinstance(value, int | float) and abs(value) > MAX_NUMBER:
        raise ConfigError(f"{name} must be at most {MAX_NUMBER:,}")
    return value


def parsed(name: str, raw: str, kind: type[T]) -> T:
    """`raw`, the text given for setting `name`, as a value of type `kind`."""
    if kind is bool:
        if raw.strip().lower() not in TRUE + FALSE:
            raise ConfigError(f"{name}={raw!r} is not true or false")
        return kind(raw.strip().lower() in TRUE)
    try:
        return kind(raw)
    except ValueError as err:
        raise ConfigError(f"{name}={raw!r} is not a valid {kind.__name__}") from err


def setting(
    name: str,
    default: T,
    description: str,
    *,
    minimum: float | None = None,
    above: float | None = None,
) -> Any:
    """A context field whose value, when not given, comes from the environment.

    An explicit value beats `DELEGATOR_<NAME>`, which beats `default`. A
    value must be at least `minimum`, or more than `above`, when given.
    """
    env_name = f"DELEGATOR_{name.upper()}"

    def from_env() -> T:
        raw = os.environ.get(env_name)
        return default if raw is None else parsed(env_name, raw, type(default))

    limits = {"minimum": minimum, "above": above}
    return field(
        default_factory=from_env,
        metadata={
            "description": f"{description} Default {default!r}; env {env_name}.",
            **{k: v for k, v in limits.items() if v is not None},
        },
    )


@dataclass(kw_only=True)
class Context:
    """What a run may use and how far it may go.

    A field left out takes its value from `DELEGATOR_<FIELD>` if set (e.g.
    `DELEGATOR_MAX_ROUNDS=2`), else its default.
    """

    lead_model: str = setting(
        "lead_model",
        "auto",
        "Model of the lead (plan, enumerate, write): 'openai:<model>', "
        "'local:<path.gguf>', 'extractive' (no LLM) or 'auto' (openai when "
        "OPENAI_API_KEY or OPENAI_BASE_URL is set, else extractive).",
    )
    subagent_model: str = setting(
        "subagent_model", "auto", "Model of the subagents; same specs as lead_model."
    )
    subagent_protocol: ProtocolChoice = setting(
        "subagent_protocol",
        "auto",
        "How LLM subagents act: 'tools' (native tool calls), 'json' (one JSON "
        "step a turn, for small models) or 'auto' (json for local: models).",
    )
    agents_dir: str = setting(
        "agents_dir",
        "",
        "A folder of subagent definitions (*.md) to add; one named like a "
        "built-in replaces it.",
    )
    routing: Routing = setting(
        "routing",
        "capability",
        "How facets are given to agents: 'capability' (the facet's words against "
        "each agent's domains), 'semantic' (TF-IDF similarity of its title and "
        "values to each description), 'load' (fewest tasks in flight) or "
        "'round_robin'.",
    )
    gates: str = setting(
        "gates",
        "",
        "Your own tool-call gates, 'module:function' separated by commas, from "
        "packages DELEGATOR_GATE_PACKAGES allows; they run after the built-in ones.",
    )
    mcp_config: str = setting(
        "mcp_config",
        "",
        'An MCP configuration file ({"mcpServers": ...}) whose servers agents '
        "may use. Empty: the operator's DELEGATOR_MCP_CONFIG, if set; with it set, "
        "no other file.",
    )
    dangerous_tools: DangerousTools = setting(
        "dangerous_tools",
        "deny",
        "What a call to a dangerous tool (web_fetch) gets unless approved: 'deny', "
        "or 'ask' a person through the branch's escalation.",
    )
    approved_tools: str = setting(
        "approved_tools",
        "",
        "Dangerous tools the configuration approves, separated by commas; only "
        "those DELEGATOR_APPROVABLE_TOOLS lists.",
    )
    verifier: str = setting(
        "verifier",
        "",
        "A definition to run as verifier after the checks by code (e.g. "
        "'fact_checker'); it may refuse findings, never add one. Empty: code only.",
    )
    approve_plan: bool = setting(
        "approve_plan",
        False,
        "Pause after planning for a person to accept, edit or extend the plan.",
    )
    kb_path: str = setting(
        "kb_path",
        "",
        "Knowledge base file (SQLite FTS5). Empty: the shipped FreshWiki index, "
        "built on first use.",
    )
    max_subagents: int = setting(
        "max_subagents",
        5,
        "Most subagents sent in a round: the first round sends one per facet, so "
        "it is also the most facets planned.",
        minimum=1,
    )
    max_new_values: int = setting(
        "max_new_values",
        5,
        "Most values each independent enumeration may add to the plan a round.",
        minimum=1,
    )
    max_rounds: int = setting(
        "max_rounds",
        3,
        "Re-delegation rounds after the first; 0 disables.",
        minimum=0,
    )
    max_parallel: int = setting(
        "max_parallel",
        0,
        "Most subagents of one run working at once; 0 chooses from the endpoint: "
        "a local engine's slots, 16 for a remote API, 8 with no model.",
        minimum=0,
    )
    min_findings_per_value: int = setting(
        "min_findings_per_value",
        1,
        "Verified findings a value needs to count as covered.",
        minimum=1,
    )
    findings_per_value: int = setting(
        "findings_per_value",
        3,
        "Findings an extractive subagent cuts per value.",
        minimum=1,
    )
    task_timeout_s: float = setting(
        "task_timeout_s",
        120.0,
        "Seconds one attempt at a subagent task may run.",
        above=0,
    )
    task_idle_timeout_s: float = setting(
        "task_idle_timeout_s",
        180.0,
        "Seconds an attempt may go without a model or tool call before it fails.",
        above=0,
    )
    task_attempts: int = setting(
        "task_attempts",
        3,
        "Attempts per task, the first included; only transient errors (timeouts, "
        "rate limits, connection errors, 5xx) are retried.",
        minimum=1,
    )
    retry_backoff_s: float = setting(
        "retry_backoff_s",
        1.0,
        "Wait before the first retry; it doubles each retry, plus up to 1s jitter.",
        minimum=0,
    )
    task_token_budget: int = setting(
        "task_token_budget",
        0,
        "Model tokens one subagent task may spend (it wraps up near it); 0: no limit.",
        minimum=0,
    )
    task_tool_calls: int = setting(
        "task_tool_calls",
        0,
        "Tool calls one subagent task may make (it wraps up near it); 0: no limit.",
        minimum=0,
    )
    run_token_budget: int = setting(
        "run_token_budget",
        0,
        "Model tokens the whole run may spend before it stops re-delegating; "
        "0: no limit.",
        minimum=0,
    )
    breaker_threshold: int = setting(
        "breaker_threshold",
        3,
        "Consecutive failed tasks that open an agent's circuit: its tasks go to "
        "its fallback agent, or stay uncovered.",
        minimum=1,
    )
    on_escalation: Escalation = setting(
        "on_escalation",
        "interrupt",
        "What a branch or run that cannot go on does: 'interrupt' pauses it for "
        "a person (with a checkpointer), 'skip' records the failure and goes on.",
    )
    escalate_after: int = setting(
        "escalate_after",
        2,
        "Failed tasks of one facet after which its branch escalates.",
        minimum=1,
    )
    run_timeout_s: float = setting(
        "run_timeout_s",
        1800.0,
        "Seconds after which a run sends no more tasks and writes its report.",
        above=0,
    )
    lead_max_tokens: int = setting(
        "lead_max_tokens",
        2048,
        "Longest answer of one lead model call, in tokens.",
        minimum=1,
    )
    subagent_max_tokens: int = setting(
        "subagent_max_tokens",
        1024,
        "Longest answer of one subagent model call, in tokens.",
        minimum=1,
    )
    request_timeout_s: float = setting(
        "request_timeout_s",
        120.0,
        "Seconds one model request may take; transient errors are retried.",
        above=0,
    )
    lead_timeout_s: float = setting(
        "lead_timeout_s",
        180.0,
        "Seconds each lead step (plan, enumerate, write) may take.",
        above=0,
    )

    def __post_init__(self) -> None:
        """Refuse settings of the wrong type, out of range, or naming nothing.

        A caller of the server sends these as JSON: nothing is taken on trust.
        Each field's type, choices and range are declared beside it.
        """
        for f in fields(self):
            value = getattr(self, f.name)
            limits = dict(f.metadata)
            setattr(self, f.name, checked(f.name, value, _TYPES[f.name], limits))
        self.check_paths()
        operators = os.environ.get(MCP_CONFIG_ENV, "")
        if operators and self.mcp_config and self.mcp_config != operators:
            raise ConfigError(
                f"mcp_config may name only the operator's file ({MCP_CONFIG_ENV})"
            )
        approvable = {
            t.strip()
            for name in (APPROVABLE_ENV, "DELEGATOR_APPROVED_TOOLS")
            for t in os.environ.get(name, "").split(",")
        }
        if self.approved - approvable:
            raise ConfigError(
                f"approved_tools may only name tools {APPROVABLE_ENV} lists"
            )
        check_credentials(self.model("lead"))
        check_credentials(self.model("subagent"))

    def check_paths(self, *, follow_links: bool = False) -> None:
        """Refuse a knowledge base or definitions folder the operator did not allow.

        A path is judged before anything looks at the file, so a refusal says
        nothing about whether it exists. As written (in `__post_init__`, which
        may run on a server's event loop) no file is touched; `follow_links`
        also judges where links lead, from a worker thread before the run
        opens them.
        """
        for name, path, env in (
            ("kb_path", self.kb_path, KB_DIRS_ENV),
            ("agents_dir", self.agents_dir, AGENT_DIRS_ENV),
        ):
            if path and not allowed(path, env, follow_links=follow_links):
                raise ConfigError(
                    f"{name} is outside the folders this server allows ({env})"
                )

    def task_limits(self, remaining_s: float | None = None) -> dict[str, Any]:
        """A task's time limits, attempts and budget; `remaining_s` of the run."""
        timeout = self.task_timeout_s
        if remaining_s is not None:
            timeout = max(min(timeout, remaining_s), 1.0)
        return {
            "timeout_s": timeout,
            "idle_timeout_s": self.task_idle_timeout_s,
            "max_attempts": self.task_attempts,
            "budget": Budget(
                tokens=self.task_token_budget, tool_calls=self.task_tool_calls
            ),
        }

    @property
    def mcp_config_file(self) -> str:
        """The MCP configuration the run's agents take their servers from."""
        return self.mcp_config or os.environ.get(MCP_CONFIG_ENV, "")

    @property
    def approved(self) -> frozenset[str]:
        """The dangerous tools the configuration approves."""
        return frozenset(t.strip() for t in self.approved_tools.split(",") if t.strip())

    def agent_model(self, model: AgentModel) -> ModelSettings:
        """The model settings an agent runs on: its role's, or none at all."""
        if model == "extractive":
            return ModelSettings(spec=EXTRACTIVE, role="subagent")
        return self.model(model)

    def model(self, role: Role) -> ModelSettings:
        """The model settings of a role."""
        lead = role == "lead"
        spec = self.lead_model if lead else self.subagent_model
        protocol: Protocol = "json" if self.subagent_protocol == "json" else "tools"
        if self.subagent_protocol == "auto" and resolve_spec(spec).startswith("local:"):
            protocol = "json"
        return ModelSettings.for_role(
            role,
            spec,
            protocol=protocol,
            max_tokens=self.lead_max_tokens if lead else self.subagent_max_tokens,
            timeout_s=self.request_timeout_s,
        )


_TYPES: dict[str, Any] = get_type_hints(Context)
"""Each context field's declared type, resolved once."""


def given_settings(pairs: list[str]) -> dict[str, Any]:
    """Context fields from `FIELD=VALUE` texts, as `--set` takes them.

    Each value is read as its field's type; the Context checks its range.
    """
    given: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep:
            raise ConfigError(f"--set {pair!r} is not FIELD=VALUE")
        if name not in _TYPES:
            known = ", ".join(sorted(_TYPES))
            raise ConfigError(f"unknown setting {name!r}; the settings are {known}")
        kind = _TYPES[name]
        given[name] = parsed(name, raw, str if get_origin(kind) is Literal else kind)
    return given
