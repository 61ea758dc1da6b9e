"""Settling the heap before a run: the live heap frozen, young collections rarer."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from runtime.heap import YOUNG_COLLECTION_EVERY, settle_heap


@pytest.fixture
def restored_collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("restored_collector")
def test_settling_freezes_the_live_heap_and_collects_garbage_first() -> None:
    gc.unfreeze()
    alive = [_Node() for _ in range(10)]
    garbage = _Node()
    garbage.other = garbage
    gone = weakref.ref(garbage)
    del garbage

    settle_heap()

    assert gone() is None  # collected, not frozen for good
    assert gc.get_freeze_count() > len(alive)
    assert gc.get_threshold()[0] == YOUNG_COLLECTION_EVERY


class _Node:
    other: object = None
