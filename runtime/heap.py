"""The garbage collector's settings for a process about to fan out a run.

A run of hundreds of branches allocates objects by the million (states,
messages, checkpoints, tasks), nearly all short-lived. With CPython's defaults
the young generation is collected every 700 net allocations, and each full
collection walks every object of the process, modules and compiled graphs
included, though none of them is ever garbage.
"""

from __future__ import annotations

import gc

YOUNG_COLLECTION_EVERY = 10_000
"""Net allocations between collections of the youngest generation (CPython: 700)."""


def settle_heap() -> None:
    """Leave what is alive now out of later collections; collect the young less often.

    Call it when what is alive is the process's own (imports, compiled
    graphs, open stores) and before the run's work: frozen objects
    (`gc.freeze`) are never collected, so garbage frozen would stay.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, middle, old)
