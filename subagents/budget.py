"""A subagent's budget at work: when to stop and answer with what it has."""

from __future__ import annotations

import time

from subagents.state import AgentState

WRAP_UP_PROMPT = (
    "Your budget is nearly spent ({reason}). Call no more tools: answer now "
    "with the findings you already have."
)


def wrap_up_reason(state: AgentState, tool_calls: int) -> str | None:
    """Why the subagent must finish now, or None while its budget lasts."""
    return state["budget"].wrap_up_reason(
        tokens=state.get("tokens", 0),
        seconds=time.time() - state["started_at"],
        tool_calls=tool_calls,
    )


def wrapped_up(reason: str) -> str:
    """The note a result carries when its subagent finished early."""
    return f"wrapped up early: {reason}"
