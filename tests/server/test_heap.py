"""The heap keeper freezes what lives on, lets short-lived cycles be collected, and sweeps frozen cycles once the
heap has grown."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from webapp.server.heap import CHECK_EVERY, HeapKeeper

INTERVAL = 0.005


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # this process's collector as it was


async def ticks(count: int) -> None:
    await asyncio.sleep(INTERVAL * count + 0.05)


async def test_the_survivors_are_frozen_and_a_short_lived_cycle_is_collected_first() -> None:
    keeper = HeapKeeper(interval=INTERVAL, growth=100.0)
    keeper.start()
    try:
        before = gc.get_freeze_count()
        kept = [Node() for _ in range(1_000)]
        dropped = weakref.ref(Node())  # garbage at once: the next tick's young collection frees it
        await ticks(2)
        assert dropped() is None
        assert gc.get_freeze_count() >= before + len(kept)
        assert not any(obj is kept[0] for obj in gc.get_objects())  # out of every collection's walk
    finally:
        keeper.stop()


async def test_a_frozen_cycle_waits_for_the_sweep_that_the_heap_growth_calls_for() -> None:
    patient = HeapKeeper(interval=INTERVAL, growth=100.0)  # the heap never grows that much here
    patient.start()
    try:
        node = Node()
        await ticks(2)  # frozen while alive
        gone = weakref.ref(node)
        del node
        gc.collect()
        await ticks(CHECK_EVERY * 2)
        assert gone() is not None and patient.sweeps == 0
    finally:
        patient.stop()
    eager = HeapKeeper(interval=INTERVAL, growth=-1.0)  # any heap is "grown": every check sweeps
    eager.start()
    try:
        await ticks(CHECK_EVERY * 2)
        assert eager.sweeps >= 1 and gone() is None
    finally:
        eager.stop()
