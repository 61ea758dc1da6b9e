"""Asking a person: pause the run with a handoff until the answer is a decision."""

from __future__ import annotations

from langgraph.types import interrupt

from state.handoff import Decision, DecisionError, HandoffSummary, read_decision


def ask_person(handoff: HandoffSummary) -> Decision:
    """`interrupt()` with the handoff; ask again, saying why, until it is a decision.

    Call it from a node: LangGraph pauses the run there, and the node runs again
    when the thread is resumed with `Command(resume=...)`.
    """
    shown = handoff
    while True:
        answer = interrupt(shown.model_dump(mode="json"))
        try:
            return read_decision(answer)
        except DecisionError as err:
            shown = handoff.model_copy(update={"problem": str(err)})
