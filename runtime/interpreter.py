"""The interpreter's settings for a process about to fan out a run.

A run of hundreds of branches allocates objects by the million (states,
messages, checkpoints, tasks), nearly all short-lived. With CPython's defaults
the young generation is collected every 700 net allocations, and each full
collection walks every object of the process, modules and compiled graphs
included, though none of them is ever garbage.

Its branches also hand work to threads (knowledge-base reads, which must not
block the event loop) and wait for the answers. With the default switch
interval of 5 ms, a thread that has finished waits up to that long for the
busy event loop to let it hand its answer back.
"""

from __future__ import annotations

import gc
import sys

YOUNG_COLLECTION_EVERY = 10_000
"""Net allocations between collections of the youngest generation (CPython: 700)."""
SWITCH_INTERVAL_S = 0.001
"""Seconds a thread runs before another may take the interpreter (CPython: 0.005)."""


def settle_interpreter() -> None:
    """Freeze what is alive now, collect the young less often, switch threads sooner.

    Call it when what is alive is the process's own (imports, compiled
    graphs, open stores) and before the run's work: frozen objects
    (`gc.freeze`) are never collected, so garbage frozen would stay.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, middle, old)
    sys.setswitchinterval(SWITCH_INTERVAL_S)
