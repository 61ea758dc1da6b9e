"""Run configuration: LangGraph's `context_schema`, set from Studio, the CLI or env."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from runtime.models import resolve_spec


class ConfigError(ValueError):
    """A setting out of range or not of its type."""


@dataclass(kw_only=True)
class Context:
    """What a run may use and how far it may go.

    Every field can also be set by an environment variable named
    `DELEGATOR_<FIELD>` (e.g. `DELEGATOR_MAX_ROUNDS=2`) when left at its default.
    """

    lead_model: str = field(
        default="auto",
        metadata={
            "description": "Model of the lead (plan, enumerate, write): "
            "'openai:<model>', 'extractive' (no LLM) or 'auto' (openai when "
            "OPENAI_API_KEY or OPENAI_BASE_URL is set, else extractive)."
        },
    )
    subagent_model: str = field(
        default="auto",
        metadata={"description": "Model of the subagents; same specs as lead_model."},
    )
    kb_path: str = field(
        default="",
        metadata={
            "description": "Knowledge base file (SQLite FTS5). Empty: the shipped "
            "FreshWiki index, built on first use."
        },
    )
    max_subagents: int = field(
        default=5,
        metadata={"description": "Most facets planned, and most tasks sent per round."},
    )
    max_rounds: int = field(
        default=3,
        metadata={"description": "Re-delegation rounds after the first; 0 disables."},
    )
    min_findings_per_value: int = field(
        default=1,
        metadata={
            "description": "Verified findings a value needs to count as covered."
        },
    )
    findings_per_value: int = field(
        default=3,
        metadata={"description": "Findings an extractive subagent cuts per value."},
    )
    task_timeout_s: float = field(
        default=120.0,
        metadata={"description": "Seconds a subagent task may run before it fails."},
    )
    lead_timeout_s: float = field(
        default=180.0,
        metadata={
            "description": "Seconds each lead step (plan, enumerate, write) may take."
        },
    )

    def __post_init__(self) -> None:
        """Fill fields left at their default from `DELEGATOR_<FIELD>`."""
        for f in fields(self):
            env = os.environ.get(f"DELEGATOR_{f.name.upper()}")
            if env is None or getattr(self, f.name) != f.default:
                continue
            kind = type(getattr(self, f.name))
            try:
                setattr(self, f.name, kind(env))
            except ValueError as err:
                raise ConfigError(
                    f"DELEGATOR_{f.name.upper()}={env!r} is not a valid {kind.__name__}"
                ) from err
        for name in ("max_subagents", "min_findings_per_value", "findings_per_value"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")
        if self.max_rounds < 0:
            raise ConfigError("max_rounds must be 0 or more")
        if self.task_timeout_s <= 0 or self.lead_timeout_s <= 0:
            raise ConfigError("timeouts must be positive")
        resolve_spec(self.lead_model)
        resolve_spec(self.subagent_model)
