"""The scale model: what 100 workers × 1,000 views at 1,000 stock changes/s and 1,000 calls/s would cost Redis and a
worker, projected from unit costs measured here at small operating points that are checked to be linear.

Workload (apps.md §14.1): 3 warehouse topics, every worker watches every topic, 99 % of calls cross workers, no
`/viewer` open. Redis (Debian's redis-server, no persistence) is pinned to core 0, everything else to core 1.
Phantom workers (bench.support.phantom) run the real `webapp.cluster` code of a worker — heartbeat, directory, inbox,
app-event relay — without NiceGUI; `redis-cli` subscribers (C) add receivers of the events channel where a point
needs more than the phantoms. The events are the inventory's own: one real `adjust_stock` on a demo database gives
the payload, and a forwarded call answers a result of a real `inventory_adjust_stock` answer's size. Load is
open-loop (scheduled on a clock). Per window: `INFO commandstats`, `cpu`, `stats` and `latencystats` deltas after
`CONFIG RESETSTAT`, and this process' CPU. Fits (least squares, two unit costs each): Redis CPU = a·commands +
b·deliveries; Redis bytes out = c·event deliveries + d·forwarded calls; worker CPU = e·foreign frames + f·operations.
A fit residual over 15 % at any point fails the run (not linear: the projection would mean nothing).
Run: `.venv/bin/python -m bench.scale [--seconds 5]`; the exit code says whether every target was met (~2 minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from actions.changes import topic
from actions.store import SqlInventoryStore
from bench.support.phantom import Phantom
from bench.support.redis_stats import RedisStats, Window, fit, redis_cli_subscribers
from tests.support.redis import RedisServer, start_redis
from webapp.cluster.relay import EVENTS_CHANNEL
from webapp.events import AppEvents, Event, JsonValue

TOPICS = tuple(topic(code) for code in ("BER", "HAM", "MUC"))
CROSSING = 0.99
VIEWS = 100  # directory entries per phantom worker (its background traffic must not depend on them)
RESULT_BYTES = 1479  # the JSON of a real inventory_adjust_stock answer (a BER view with its tab open)
TARGET = {"workers": 100, "changes": 1000.0, "calls": 1000.0}
REDIS_CPU_GOAL, REDIS_CPU_LIMIT = 0.20, 0.50  # of one core: the goal is printed, the limit fails the run
EGRESS_LIMIT = 1e9  # bits per second
FRAME_LIMIT_US = 30.0  # worker CPU per foreign frame received
LONGEST_LIMIT_US = 500.0  # p99.9 of every command the product sends
BACKGROUND_LIMIT = 2.0  # commands per worker per second, idle
RESIDUAL_LIMIT = 0.15


@dataclass(frozen=True)
class Point:
    """One operating point: phantom workers, extra C subscribers of the events channel, changes/s and calls/s."""

    workers: int
    listeners: int
    changes: float
    calls: float


POINTS = (Point(10, 0, 100, 100), Point(30, 0, 100, 100), Point(30, 0, 300, 300), Point(30, 70, 100, 100))


@dataclass(frozen=True)
class Measured:
    point: Point
    redis: Window
    worker_cpu: float
    changes: int
    calls: int
    forwarded: int
    frames: int

    @property
    def event_publishes(self) -> int:
        """The SPUBLISHes of app events: all of them less a forwarded call's request and reply."""
        return self.redis.calls.get("spublish", 0) - 2 * self.forwarded

    @property
    def event_deliveries(self) -> int:
        return self.event_publishes * (self.point.workers + self.point.listeners)

    @property
    def deliveries(self) -> int:
        return self.event_deliveries + 2 * self.forwarded


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


async def drive(phantoms: Sequence[Phantom], point: Point, seconds: float, change: JsonValue) -> tuple[int, int, int]:
    """Open-loop load for `seconds`: changes and calls on a clock; returns (changes, calls, forwarded calls)."""
    started, made, called, forwarded = time.monotonic(), 0, 0, 0
    calls: set[asyncio.Task[Any]] = set()
    while (elapsed := time.monotonic() - started) < seconds:
        while made < elapsed * point.changes:
            publisher = phantoms[made % len(phantoms)]
            publisher.events.publish(TOPICS[made % len(TOPICS)], change)
            made += 1
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
    if calls:
        await asyncio.gather(*calls)
    return made, called, forwarded


async def measure(redis: RedisServer, stats: RedisStats, point: Point, seconds: float, change: JsonValue) -> Measured:
    names = [f"p{number}" for number in range(point.workers)]
    result = {"result": {"content": [{"type": "text", "text": "x" * (RESULT_BYTES - 60)}], "isError": False}}
    phantoms = [Phantom(redis.url, name, result) for name in names]
    for phantom in phantoms:
        await phantom.start(topics=TOPICS, views=VIEWS, others=[other for other in names if other != phantom.name])
    try:
        listeners = [EVENTS_CHANNEL] * point.listeners
        with redis_cli_subscribers(redis.port, listeners, sharded=True):
            await drive(phantoms, point, 1.0, change)  # warm-up: connections, caches, the subscribers' start
            await asyncio.sleep(0.5)
            frames = sum(phantom.relay.received for phantom in phantoms)
            cpu = time.process_time()
            with stats.window() as window:
                changes, calls, forwarded = await drive(phantoms, point, seconds, change)
                await asyncio.sleep(0.2)  # the last frames arrive
            worker_cpu = time.process_time() - cpu
            frames = sum(phantom.relay.received for phantom in phantoms) - frames
    finally:
        for phantom in phantoms:
            await phantom.stop()
    return Measured(point, window[0], worker_cpu, changes, calls, forwarded, frames)


async def idle(redis: RedisServer, stats: RedisStats, workers: int, seconds: float) -> Window:
    """Commands of `workers` phantom workers holding views, with no load: their background traffic."""
    names = [f"i{number}" for number in range(workers)]
    phantoms = [Phantom(redis.url, name, {}) for name in names]
    for phantom in phantoms:
        await phantom.start(topics=TOPICS, views=VIEWS, others=[other for other in names if other != phantom.name])
    try:
        await asyncio.sleep(1.0)
        with stats.window() as window:
            await asyncio.sleep(seconds)
    finally:
        for phantom in phantoms:
            await phantom.stop()
    return window[0]


def pin(pid: int, core: int) -> None:
    subprocess.run(["taskset", "-cp", str(core), str(pid)], check=True, capture_output=True)


def report(points: list[Measured], background: Window, workers: int) -> bool:
    print(f"{'point':<30} {'commands':>9} {'deliveries':>10} {'Redis CPU s':>11} {'out MB':>7} {'worker CPU s':>12}")
    for m in points:
        label = f"{m.point.workers} workers+{m.point.listeners} cli, {m.point.changes:g}/{m.point.calls:g} per s"
        print(
            f"{label:<30} {m.redis.commands:>9} {m.deliveries:>10} {m.redis.cpu:>11.3f}"
            f" {m.redis.bytes_out / 1e6:>7.2f} {m.worker_cpu:>12.3f}"
        )
    a, b, cpu_residuals = fit([(m.redis.commands, m.deliveries, m.redis.cpu) for m in points])
    c, d, out_residuals = fit([(m.event_deliveries, m.forwarded, m.redis.bytes_out) for m in points])
    e, f, frame_residuals = fit([(m.frames, m.changes + m.forwarded * 2, m.worker_cpu) for m in points])
    worst = max(cpu_residuals + out_residuals + frame_residuals)
    print(
        f"\nunit costs: Redis {a * 1e6:.2f} µs per command + {b * 1e6:.2f} µs per delivery;"
        f" {c:.0f} bytes out per event delivery, {d:.0f} per forwarded call;"
        f" a worker {e * 1e6:.1f} µs per foreign frame + {f * 1e6:.1f} µs per operation"
    )
    for name, residuals in (
        ("Redis CPU", cpu_residuals),
        ("bytes out", out_residuals),
        ("worker CPU", frame_residuals),
    ):
        print(f"  fit residuals, {name}: {', '.join(f'{value:.1%}' for value in residuals)}")
    linear = worst <= RESIDUAL_LIMIT
    print(f"largest fit residual {worst:.1%} — linear within {RESIDUAL_LIMIT:.0%}: {'yes' if linear else 'NO'}")

    publishes_per_change = sum(m.event_publishes for m in points) / sum(m.changes for m in points)
    call_commands = [
        (
            m.redis.commands
            - m.event_publishes
            - background_rate(background, workers) * m.redis.seconds * m.point.workers
        )
        / m.forwarded
        for m in points
        if m.forwarded
    ]
    per_call = sum(call_commands) / len(call_commands)
    per_worker = background_rate(background, workers)
    n, changes, calls = TARGET["workers"], TARGET["changes"], TARGET["calls"]
    commands = changes * publishes_per_change + calls * CROSSING * per_call + n * per_worker
    event_deliveries = changes * publishes_per_change * n
    deliveries = event_deliveries + calls * CROSSING * 2
    redis_cpu = a * commands + b * deliveries
    egress = (c * event_deliveries + d * calls * CROSSING) * 8
    frame_us = e * 1e6
    longest = max((value, name) for m in points for name, value in m.redis.p999.items())

    print(f"\nprojected: {n} workers × 1,000 views, {changes:,.0f} changes/s and {calls:,.0f} calls/s")
    print(f"  event publishes per change {publishes_per_change:.2f}; Redis commands per forwarded call {per_call:.2f}")
    print(f"  an event frame on the wire ≈ {c:.0f} bytes per delivery")
    rows = [
        (
            "background Redis commands per worker per second",
            f"{per_worker:.2f}",
            f"≤ {BACKGROUND_LIMIT:g}",
            per_worker <= BACKGROUND_LIMIT,
        ),
        (
            "longest Redis command, p99.9",
            f"{longest[0]:.0f} µs ({longest[1]})",
            f"< {LONGEST_LIMIT_US:g} µs",
            longest[0] < LONGEST_LIMIT_US,
        ),
        (
            "projected Redis CPU",
            f"{redis_cpu:.1%} of a core",
            f"< {REDIS_CPU_GOAL:.0%} (fails above {REDIS_CPU_LIMIT:.0%})",
            redis_cpu < REDIS_CPU_LIMIT,
        ),
        ("projected Redis egress", f"{egress / 1e9:.2f} Gbit/s", "< 1 Gbit/s", egress < EGRESS_LIMIT),
        (
            "worker CPU per foreign frame received",
            f"{frame_us:.1f} µs",
            f"< {FRAME_LIMIT_US:g} µs",
            frame_us < FRAME_LIMIT_US,
        ),
    ]
    for name, value, target, met in rows:
        print(f"  {name:<50} {value:>24}  target {target} — {'met' if met else 'MISSED'}")
    if redis_cpu >= REDIS_CPU_GOAL:
        print(f"  (the projected Redis CPU misses the {REDIS_CPU_GOAL:.0%} goal)")
    return linear and all(met for *_, met in rows)


def background_rate(window: Window, workers: int) -> float:
    return window.commands / window.seconds / workers


async def run(seconds: float) -> bool:
    os.sched_setaffinity(0, {1})
    redis = start_redis()
    stats = RedisStats(redis.port)
    try:
        pin(stats.pid(), 0)
        change = await real_change()
        print(f"one stock change's event: {len(orjson.dumps(change))} bytes of JSON")
        background = await idle(redis, stats, 30, seconds)
        points = [await measure(redis, stats, point, seconds, change) for point in POINTS]
    finally:
        stats.close()
        redis.close()
    return report(points, background, 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each measuring window")
    options = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(0 if asyncio.run(run(options.seconds)) else 1)


if __name__ == "__main__":
    main()
