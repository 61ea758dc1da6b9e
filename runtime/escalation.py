"""Asking a person: pause the run with a question until the answer makes sense."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from langgraph.types import interrupt

from state.handoff import Decision, DecisionError, HandoffSummary, read_decision

T = TypeVar("T")


def ask_until(
    shown: dict[str, Any], read: Callable[[Any], T], refused: type[ValueError]
) -> T:
    """`interrupt()` with `shown`; ask again, saying why, until `read` accepts.

    Call it from a node: LangGraph pauses the run there, and the node runs again
    when the thread is resumed with `Command(resume=...)`.
    """
    asked = shown
    while True:
        answer = interrupt(asked)
        try:
            return read(answer)
        except refused as err:
            asked = {**shown, "problem": str(err)}


def ask_person(handoff: HandoffSummary) -> Decision:
    """A person's decision on a branch or run that cannot go on by itself."""
    return ask_until(handoff.model_dump(mode="json"), read_decision, DecisionError)
