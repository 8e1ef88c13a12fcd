"""One operating point of the scale model (`bench.scale`): its load — changes from the workload's publishing workers
or a bare publisher, forwarded calls among phantom workers, on a clock — and what Redis and this process spent on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import tempfile
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from actions.changes import topic
from actions.store import SqlInventoryStore
from bench.support.bare import publishing
from bench.support.phantom import Phantom
from bench.support.publishers import Publishers
from bench.support.redis_stats import RedisStats, Window, redis_cli_subscribers
from tests.support.redis import RedisServer
from webapp.cluster.relay import EVENTS_CHANNEL, frame
from webapp.events import AppEvents, Event, JsonValue

__all__ = ["CROSSING", "TOPICS", "Load", "Measured", "Point", "idle", "measure", "real_change", "started"]

TOPICS = tuple(topic(code) for code in ("BER", "HAM", "MUC"))
CROSSING = 0.99  # of the calls, those whose view's tab is on another worker than the caller's
VIEWS = 100  # directory entries per phantom worker (its background traffic must not depend on them)
RESULT_BYTES = 1479  # the JSON of a real inventory_adjust_stock answer (a BER view with its tab open)


@dataclass(frozen=True)
class Point:
    """One operating point: phantom workers, extra C subscribers of the events channel, changes/s and calls/s."""

    workers: int
    listeners: int
    changes: float
    calls: float
    apart: bool = False
    """The changes come from a bare publisher in a process of its own (one frame each), so this process' CPU is the
    receiving workers' alone."""


@dataclass(frozen=True)
class Measured:
    point: Point
    redis: Window
    worker_cpu: float
    changes: int
    calls: int
    forwarded: int
    frames: int
    failed: int
    """Forwarded calls that got no answer (the phantoms' process could not keep up: the point means nothing)."""

    @property
    def event_publishes(self) -> int:
        """The SPUBLISHes of app events: all of them less a forwarded call's request and reply."""
        return self.redis.calls.get("spublish", 0) - 2 * self.forwarded

    @property
    def event_deliveries(self) -> int:
        return self.event_publishes * (self.point.workers + self.point.listeners)


async def real_change() -> JsonValue:
    """The payload the inventory publishes for one agent's stock adjustment in the BER warehouse."""
    events, seen = AppEvents(), asyncio.Event()
    texts: list[str] = []

    def keep(event: Event) -> None:
        texts.append(event.text)
        seen.set()

    subscription = events.subscribe(TOPICS[0], keep)
    with tempfile.TemporaryDirectory() as folder, SqlInventoryStore(Path(folder) / "demo.db", events=events) as store:
        store.adjust_stock("FST-1001", "BER", 1, reason="Cycle count", actor="agent")
        async with asyncio.timeout(5):
            await seen.wait()
    subscription.close()
    return orjson.loads(texts[0])


def call_body(number: int) -> dict[str, Any]:
    """What a worker forwards for an `inventory_adjust_stock` call (the transport's request body)."""
    arguments = {"_view": f"view-{number % 997}", "sku": "FST-1001", "delta": 1, "reason": "Cycle count"}
    return {"tool": "inventory_adjust_stock", "arguments": arguments, "caller": [None, None, "2025-11-25"]}


async def drive(
    publishers: Publishers, phantoms: Sequence[Phantom], point: Point, seconds: float, change: JsonValue
) -> tuple[int, int, int, int]:
    """Open-loop load for `seconds`: changes at the publishers' random times, calls on a clock; returns (changes,
    calls, forwarded calls, forwarded calls that failed)."""
    started, made, called, forwarded = time.monotonic(), 0, 0, 0
    calls: set[asyncio.Task[Any]] = set()
    arrivals = publishers.arrivals(point.changes) if point.changes else iter(())
    upcoming = next(arrivals, None)
    while (elapsed := time.monotonic() - started) < seconds:
        while upcoming is not None and upcoming[0] <= elapsed:
            publishers.publish(upcoming[1], TOPICS[made % len(TOPICS)], change)
            made += 1
            upcoming = next(arrivals, None)
        while called < elapsed * point.calls:
            caller = phantoms[called % len(phantoms)]
            if (called % 100) / 100 < CROSSING:  # else the view's tab is on the caller's own worker: no Redis
                owner = phantoms[(called + 1 + called // len(phantoms)) % len(phantoms)]
                if owner is caller:
                    owner = phantoms[(called + 1) % len(phantoms)]
                task = asyncio.create_task(caller.call(owner.name, call_body(called)))
                calls.add(task)
                task.add_done_callback(calls.discard)
                forwarded += 1
            called += 1
        await asyncio.sleep(0.005)
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    return made, called, forwarded, sum(isinstance(outcome, BaseException) for outcome in outcomes)


@dataclass(frozen=True)
class Load:
    """Where a point's load comes from: the publishing workers (changes) and the phantoms (calls, and receivers)."""

    publishers: Publishers
    phantoms: Sequence[Phantom]


async def measure(
    redis: RedisServer, stats: RedisStats, load: Load, point: Point, seconds: float, change: JsonValue
) -> Measured:
    """One window of `point`'s load, received by the phantoms (as many as the point's workers) and its C subscribers."""
    publishers, phantoms = load.publishers, load.phantoms
    data, here = frame("another-worker", [Event(TOPICS[0], orjson.dumps(change).decode())]), point
    with contextlib.ExitStack() as stack:
        stack.enter_context(redis_cli_subscribers(redis.port, [EVENTS_CHANNEL] * point.listeners, sharded=True))
        if point.apart:
            stack.enter_context(publishing(redis.port, EVENTS_CHANNEL, data, point.changes, seconds + 1.0))
            here = dataclasses.replace(point, changes=0)
        await drive(publishers, phantoms, here, 1.0, change)  # warm-up: connections, caches, the subscribers' start
        frames = sum(phantom.relay.frames for phantom in phantoms)
        cpu = time.process_time()
        with stats.window() as window:
            changes, calls, forwarded, failed = await drive(publishers, phantoms, here, seconds, change)
        worker_cpu = time.process_time() - cpu
        frames = sum(phantom.relay.frames for phantom in phantoms) - frames
    return Measured(point, window[0], worker_cpu, changes, calls, forwarded, frames, failed)


@contextlib.asynccontextmanager
async def started(redis: RedisServer, workers: int) -> AsyncGenerator[list[Phantom]]:
    """`workers` phantom workers, each holding `VIEWS` views and watching every topic, until the block ends."""
    names = [f"p{number}" for number in range(workers)]
    result = {"result": {"content": [{"type": "text", "text": "x" * (RESULT_BYTES - 60)}], "isError": False}}
    phantoms = [Phantom(redis.url, name, result) for name in names]
    try:
        for phantom in phantoms:
            others = [other for other in names if other != phantom.name]
            await phantom.start(topics=TOPICS, views=VIEWS, others=others)
        yield phantoms
    finally:
        for phantom in phantoms:
            await phantom.stop()


async def idle(stats: RedisStats, phantoms: Sequence[Phantom], seconds: float) -> tuple[Window, float]:
    """Redis' work and this process' CPU while `phantoms` hold their views with no load: their background."""
    await asyncio.sleep(1.0)
    cpu = time.process_time()
    with stats.window() as window:
        await asyncio.sleep(seconds)
    return window[0], time.process_time() - cpu
