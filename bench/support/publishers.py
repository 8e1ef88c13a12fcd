"""The workload's publishing workers for the scale model: as many app-event relays as the workload has workers,
each the real `EventRelay` with the product's `--events-budget` (or another), on a Redis connection of its own,
without a subscription (a point's phantom workers and C subscribers receive the frames). Each is fed its share of the
stock changes at random times (Poisson arrivals: independent agents acting), so a window holds as many changes as it
would in production at that rate per worker, no more."""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator

from webapp.cluster.engine import Engine
from webapp.cluster.leases import COMMAND_TIMEOUT
from webapp.cluster.relay import EventRelay
from webapp.core.settings import Settings
from webapp.events import AppEvents, JsonValue

__all__ = ["BUDGET", "Publishers"]

BUDGET = float(Settings.model_fields["events_budget"].default)
"""Deliveries a second the workers' frames may cost Redis together: the product's default."""


class Publishers:
    """`count` publishing workers; `start()` before publishing, `stop()` after."""

    def __init__(self, redis_url: str, count: int, budget: float = BUDGET) -> None:
        self._engines = [Engine(redis_url, connect_timeout=COMMAND_TIMEOUT) for _ in range(count)]
        self._events = [AppEvents() for _ in range(count)]
        self._relays = [
            EventRelay(engine.client, f"publisher-{number}", events, budget=budget)
            for number, (engine, events) in enumerate(zip(self._engines, self._events, strict=True))
        ]
        self._random = random.Random(1)

    @property
    def window(self) -> float:
        """The longest window of a worker: each paces by the readers its last frame reached."""
        return max(relay.window for relay in self._relays)

    def start(self) -> None:
        for relay in self._relays:
            relay.start()

    async def stop(self) -> None:
        for relay in self._relays:
            await relay.stop()
        for engine in self._engines:
            await engine.aclose()

    def arrivals(self, rate: float) -> Iterator[tuple[float, int]]:
        """(seconds from now, publisher) of each change, in time order, when the workers together make `rate` changes a
        second, each its share at random times."""
        share = rate / len(self._relays)
        due = [(self._random.expovariate(share), number) for number in range(len(self._relays))]
        heapq.heapify(due)
        while True:
            at, number = heapq.heappop(due)
            yield at, number
            heapq.heappush(due, (at + self._random.expovariate(share), number))

    def publish(self, number: int, topic: str, payload: JsonValue) -> None:
        self._events[number].publish(topic, payload)
