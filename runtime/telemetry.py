"""Protocol events: logged where they happen, published to LangGraph's stream.

A coordinator node `emit`s its events. A subagent run `record`s its events (the
log line is written at once) and the coordinator `publish`es them when the run
returns, so they reach the `custom` stream at the top level, where a client
reads them without asking for subgraph streams.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from langgraph.config import get_stream_writer

from state.events import Event, EventKind

logger = logging.getLogger("delegator.events")
Field = str | int | float | bool | None


def record(kind: EventKind, **fields: Field) -> Event:
    """Log one event and return it, for its node to append to state."""
    event = Event(kind=kind, fields=fields)
    logger.info(event.log_line())
    return event


def publish(events: Iterable[Event]) -> None:
    """Write events to the run's `custom` stream (nothing outside a run)."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run
        return
    for event in events:
        writer({"event": event.kind, **event.model_dump(mode="json")["fields"]})


def emit(kind: EventKind, **fields: Field) -> Event:
    """Log one event, publish it, and return it for the node to append to state."""
    event = record(kind, **fields)
    publish([event])
    return event
