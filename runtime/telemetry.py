"""Emit protocol events to LangGraph's custom stream and to the log."""

from __future__ import annotations

import logging

from langgraph.config import get_stream_writer

from state.events import Event, EventKind

logger = logging.getLogger("delegator.events")


def emit(kind: EventKind, **fields: str | int | float | bool | None) -> Event:
    """Publish one event and return it, for the node to append to state."""
    event = Event(kind=kind, fields=fields)
    logger.info(event.log_line())
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run
        return event
    writer({"event": event.kind, **event.model_dump(mode="json")["fields"]})
    return event
