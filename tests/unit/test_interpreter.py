"""Settling the interpreter before a run: the live heap frozen, young collections
rarer, threads switched sooner."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from runtime.interpreter import (
    SWITCH_INTERVAL_S,
    YOUNG_COLLECTION_EVERY,
    settle_interpreter,
)


@pytest.fixture
def restored_interpreter() -> Iterator[None]:
    threshold, interval = gc.get_threshold(), sys.getswitchinterval()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("restored_interpreter")
def test_settling_freezes_the_live_heap_and_collects_garbage_first() -> None:
    gc.unfreeze()
    alive = [_Node() for _ in range(10)]
    garbage = _Node()
    garbage.other = garbage
    gone = weakref.ref(garbage)
    del garbage

    settle_interpreter()

    assert gone() is None  # collected, not frozen for good
    assert gc.get_freeze_count() > len(alive)
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_EVERY
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)


class _Node:
    other: object = None
