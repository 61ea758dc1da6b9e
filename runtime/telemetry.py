"""Protocol events: logged and written to LangGraph's `custom` stream as they happen.

A subagent's branch runs its node in the coordinator graph itself, so a client
reads every event at the top level without asking for subgraph streams.
"""

from __future__ import annotations

import logging

from langgraph.config import get_stream_writer

from state.events import Event, EventKind

logger = logging.getLogger("delegator.events")
Field = str | int | float | bool | None


def emit(kind: EventKind, **fields: Field) -> Event:
    """Log one event, write it to the run's `custom` stream, and return it.

    The node that emits it appends it to state. Outside a graph run, it is
    only logged.
    """
    event = Event(kind=kind, fields=fields)
    if logger.isEnabledFor(logging.INFO):
        logger.info(event.log_line())
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run
        return event
    writer({"event": event.kind, **event.model_dump(mode="json")["fields"]})
    return event
