"""The cyclic garbage collector kept off the server's long-lived heap.

A server with many open views holds millions of objects that live as long as their tabs (~4,400 per inventory
view). Python's collector walked all of them in every full collection: 1.3 s with 1,000 views, every ~25 s while
changes flowed. Its young collections grew large too: an old object's death counts against new allocations, so
while the changes of 1,000 views replaced one another the young generation held ~50,000 objects, and the 10–40 ms
collection of it fell inside the calls.

The keeper collects the young generation and freezes what survived (`gc.freeze`) every `INTERVAL` seconds: every
collection then walks the objects of that last interval only. An object frozen while alive and garbage later is
freed as usual unless it is part of a reference cycle (a closed view's elements): those wait for the keeper's
sweep, a full walk of everything (one pause as long as a full collection), which it runs once the heap (Python's
allocated blocks) has grown by `GROWTH` since the last one: at most that share of memory waits for a sweep
(Python's own rule for full collections is the same quarter).
"""

from __future__ import annotations

import asyncio
import gc
import sys

__all__ = ["HeapKeeper"]

INTERVAL = 0.1  # seconds between two freezes
GROWTH = 0.25  # the heap's growth since the last sweep that calls for the next
CHECK_EVERY = 10  # freezes between two readings of the heap's size (~1 ms with 1,000 views)


class HeapKeeper:
    """Freezes the survivors of young collections on one event loop; `start` once the server has loaded."""

    def __init__(self, interval: float = INTERVAL, growth: float = GROWTH) -> None:
        self.interval = interval
        self.growth = growth
        self.sweeps = 0
        """How many full walks the keeper ran."""
        self._swept = 0  # the heap's size (Python's allocated blocks) after the last sweep
        self._ticks = 0
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        """The start-up garbage collected and everything else frozen now, the next freeze scheduled on the running
        loop."""
        gc.collect()
        gc.freeze()
        self._swept = sys.getallocatedblocks()
        self._timer = asyncio.get_running_loop().call_later(self.interval, self._tick)

    def stop(self) -> None:
        """No more freezes; the heap stays as it is (a stopping server)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        gc.collect(0)  # short-lived cycles go now, not into the frozen heap
        gc.freeze()
        self._ticks += 1
        if self._ticks % CHECK_EVERY == 0 and sys.getallocatedblocks() > self._swept * (1 + self.growth):
            self._sweep()
        self._timer = asyncio.get_running_loop().call_later(self.interval, self._tick)

    def _sweep(self) -> None:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._swept = sys.getallocatedblocks()
        self.sweeps += 1
