"""What workers send to Redis whatever their views (apps.md §14.1), on a real Redis: an idle worker's background
commands per second with 10 and with 1,000 attached views, SPUBLISHes and deliveries per app event from 2 to 30
phantom workers (the real `webapp.cluster` classes, one process), and the longest command (`INFO latencystats`)."""

from __future__ import annotations

import asyncio
import functools
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import redis.asyncio as aioredis

from bench.support.phantom import Phantom
from tests.support.cluster import command_counts, per_beats
from tests.support.redis import start_redis
from webapp import AppEvents, Event
from webapp.bridge import view_digest
from webapp.calllog import CallLog
from webapp.cluster import ClusterHost, Node, heartbeat_key
from webapp.core import Settings

__all__ = ["background", "longest_command", "phantom_publishes", "traffic"]

BACKGROUND_PER_S = 2.5  # commands per worker per second, whatever its views (with the read-path proof)
LONGEST_US = 500.0  # p99.9 of every command the workers send
PUBLISHES_PER_EVENT = 1.0
BEATS = 10  # heartbeat intervals counted per background measurement (the proof's PING comes every second one)
EVENTS = 200  # app events per phantom measurement
_APART = 0.002  # seconds between two of them: each goes out alone
_OURS = {"monitor", "info", "config", "client", "flushall", "hello", "command", "ping"}  # the bench's own


class _Registry:
    """A phantom worker's views as `Node` reads them: none to take back, and worker w2 holding some (so the node
    looks at w2's heartbeat every second, as a worker beside others does)."""

    worker: str | None = None

    def __iter__(self) -> Iterator[object]:
        return iter(())

    async def reclaim(self) -> int:
        return 0

    async def holders(self) -> list[str]:
        return ["w2"]

    async def orphan_worker(self, worker: str) -> int:
        return 0

    async def taken_elsewhere(self) -> list[object]:
        return []


@dataclass
class _Bridge:
    registry: _Registry = field(default_factory=_Registry)
    transport: object = None
    outcomes: None = None


@dataclass
class _Host:
    """What `Node` needs of a server, for a phantom worker (no NiceGUI, no database)."""

    settings: Settings
    bridges: list[Any]
    events: AppEvents = field(default_factory=AppEvents)
    calllog: CallLog = field(default_factory=CallLog)
    node: Node | None = None
    tunnel: None = None
    base_url: str = "http://127.0.0.1:1"

    def on_startup(self, hook: Any) -> None: ...
    def on_shutdown(self, hook: Any) -> None: ...


async def background(redis_url: str) -> bool:
    """A phantom worker (w1: the real `Node`, its engine, heartbeat, inbox, relay and look at the other workers) with
    worker w2 holding views: its commands per second, idle, with 10 and 1,000 directory entries of its own."""
    figures: dict[int, float] = {}
    client = aioredis.Redis.from_url(redis_url)
    try:  # w2 is alive throughout without a command of its own in the windows counted
        await client.set(heartbeat_key("w2"), b"1", px=600_000)
    finally:
        await client.aclose()
    host = _Host(Settings(redis_url=redis_url, request_state_key="k" * 32, worker_id="w1"), [_Bridge()])
    node = Node(cast("ClusterHost", host), "w1")
    await node.start()
    try:
        claimed = 0
        for views in (10, 1000):
            for number in range(claimed, views):  # as that many attaches here would
                await node.leases.claim(view_digest(f"attached-{number}"))
            claimed = views
            seen = await per_beats(redis_url, "w1", BEATS)
            figures[views] = sum(seen.values()) / BEATS
            print(f"  {views:>5} views: {figures[views]:.2f} commands/s ({dict(seen)} in {BEATS} s)")
    finally:
        await node.stop()
    # the same but for one command: the look and the heartbeat run on timers of their own, so a window counted from
    # beat to beat holds four or five looks as their phases drift
    same = abs(figures[10] - figures[1000]) <= 1 / BEATS
    # the look and the proof run on timers of their own: a window counted from beat to beat holds one of either more
    # or fewer as their phases drift
    ok = all(value <= BACKGROUND_PER_S + 2 / BEATS for value in figures.values()) and same
    print(f"background commands per worker per second: target ≤ {BACKGROUND_PER_S:g}, equal (± one) — {_met(ok)}")
    return ok


async def phantom_publishes(redis_url: str, port: int, sizes: tuple[int, ...] = (2, 10, 30)) -> bool:
    """N phantom workers (bench.support.phantom: engine, heartbeat, inbox and relay each); one publishes `EVENTS`
    stock changes, each in a loop turn of its own (a lone change: changes of one turn share a frame), and the
    SPUBLISHes per change (flat in N) and the deliveries it takes are printed."""
    per_change: dict[int, float] = {}
    for size in sizes:
        workers = [Phantom(redis_url, f"p{number}", {}) for number in range(size)]
        try:
            for worker in workers:
                await worker.start(topics=(), views=0, others=())
            arrived, seen = asyncio.Event(), [0]
            workers[-1].events.subscribe("inventory/stock/BER", functools.partial(_count, arrived=arrived, seen=seen))
            before = command_counts(port).get("spublish", 0)
            for number in range(EVENTS):
                workers[0].events.publish("inventory/stock/BER", {"sku": "FST-1001", "on_hand": number})
                await asyncio.sleep(_APART)
            async with asyncio.timeout(30):
                await arrived.wait()
            per_change[size] = (command_counts(port).get("spublish", 0) - before) / EVENTS
        finally:
            for worker in workers:
                await worker.stop()
        print(f"  {size:>3} workers: {per_change[size]:.2f} SPUBLISH per change, {size - 1} deliveries")
    flat = max(per_change.values()) - min(per_change.values()) <= 0.01
    ok = flat and all(value <= PUBLISHES_PER_EVENT for value in per_change.values())
    print(f"SPUBLISH per stock change (phantoms): target ≤ {PUBLISHES_PER_EVENT:g}, flat in workers — {_met(ok)}")
    return ok


def _count(event: Event, *, arrived: asyncio.Event, seen: list[int]) -> None:
    seen[0] += 1
    if seen[0] == EVENTS:
        arrived.set()


def longest_command(port: int, label: str) -> bool:
    """The highest p99.9 of the commands the workers sent since the last `CONFIG RESETSTAT` (INFO latencystats)."""
    done = subprocess.run(
        ["redis-cli", "-p", str(port), "INFO", "latencystats"], check=True, capture_output=True, text=True, timeout=10
    )
    tails: dict[str, float] = {}
    for line in done.stdout.splitlines():
        if line.startswith("latency_percentiles_usec_"):
            name, _, stats = line.removeprefix("latency_percentiles_usec_").partition(":")
            values = dict(part.split("=", 1) for part in stats.split(","))
            if name.split("|")[0] not in _OURS and "p99.9" in values:
                tails[name] = float(values["p99.9"])
    name, worst = max(tails.items(), key=lambda item: item[1], default=("none", 0.0))
    ok = worst < LONGEST_US
    shown = ", ".join(f"{key} {value:g}" for key, value in sorted(tails.items()))
    print(f"longest command p99.9 ({label}): {name} {worst:g} µs ({shown}); target < {LONGEST_US:g} µs — {_met(ok)}")
    return ok


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


async def traffic(worker_redis_port: int) -> bool:
    """The figures above on a Redis of their own (the bench's workers would add their heartbeats to the counts),
    then the longest command of both Redis servers (the workers' calls and events, the phantoms' traffic)."""
    redis = start_redis()
    try:
        print("\nRedis traffic whatever the views (apps.md §14.1)")
        met = [await background(redis.url), await phantom_publishes(redis.url, redis.port)]
        checked = [longest_command(worker_redis_port, "the workers' Redis"), longest_command(redis.port, "phantoms")]
        return all([*met, *checked])
    finally:
        redis.close()
