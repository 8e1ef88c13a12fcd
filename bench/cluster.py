"""Two workers on one database and one Redis: what an inventory call costs when the view's tab is on the other worker.

Redis (Debian's redis-server, no persistence) and two inventory workers run on loopback; a BER inventory view is open
in a Debian Chromium tab on worker B. Per round an agent on B (same worker) and an agent on A (cross worker) each
call `inventory_adjust_stock` on it (+1, −1: every call changes what the tab shows, so each waits for the tab's
confirmation), in both protocol modes; two counter-app workers beside them give the framework's floor the same way.
Then (bench.support.cluster): Redis commands per call (MONITOR); (bench.support.traffic) an idle worker's background
commands per second with 10 and 1,000 views, SPUBLISHes per stock change from 2 to 30 phantom workers and the longest
command (INFO latencystats p99.9); the time to VIEW_UNAVAILABLE after a third worker holding views is killed (SIGKILL:
the exact receiver count of the owner's inbox, no heartbeat TTL waited out) and to BRIDGE_UNAVAILABLE with Redis
stopped, and each worker's RSS and call latency (a proxy for its event-loop lag) with 100 open views (light tabs:
NiceGUI's page load and socket handshake).
Run: `.venv/bin/python -m bench.cluster [--calls 500] [--views 100] [--only latency]`; the exit code says whether
every target was met (about 5 minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mcp import Client
from playwright.async_api import Browser, async_playwright, expect

from bench.support.cluster import INVENTORY, Cluster, capacity, commands, failures, percentile, timed
from bench.support.latency import CHROMIUM_ARGS
from bench.support.traffic import traffic
from tests.support.cluster import on_worker
from tests.support.e2e import RunningServer, run_server
from tests.support.redis import start_redis

COUNTER = "tests.support.test_app:build"
SETTINGS = ("--wait-for-live", "10", "--reconnect-grace", "5")
CROSS_P50_MS = 1.5  # cross-worker p50 minus same-worker p50, inventory
MODES: tuple[Literal["auto", "legacy"], ...] = ("auto", "legacy")
WARM_UP = 20
PARTS = ("latency", "commands", "traffic", "failures", "capacity")
ORDERS = ((("same worker", 1), ("cross worker", -1)), (("cross worker", 1), ("same worker", -1)))


@dataclass(frozen=True)
class Subject:
    """One app's view with its tab on worker `near`; calls come through `near` (same worker) and `far` (cross)."""

    name: str
    near: RunningServer
    far: RunningServer
    view: str
    tool: str

    def arguments(self, delta: int) -> dict[str, Any]:
        if self.tool == "counter_increment":
            return {"_view": self.view}
        return {"_view": self.view, "sku": "FST-1001", "delta": delta, "reason": "Cycle count"}


async def open_subject(
    cluster: Cluster, browser: Browser, name: str, near: RunningServer, far: RunningServer
) -> Subject:
    """Open the view in a legacy session of its own on `far` (so nothing reuses it) and its tab on `near`."""
    opener = await cluster.sessions.enter_async_context(Client(far.mcp_url, mode="legacy"))
    page = await (await browser.new_context(viewport={"width": 1440, "height": 1000})).new_page()
    if name == "inventory":
        opened = await opener.call_tool("inventory", {"warehouse_code": "BER"})
        assert opened.structured_content is not None, opened
        await page.goto(on_worker(str(opened.structured_content["url"]), near))
        await expect(page.get_by_test_id("row-count")).not_to_have_text("0 items shown")
        return Subject(name, near, far, str(opened.structured_content["view"]), "inventory_adjust_stock")
    opened = await opener.call_tool("counter", {"start": 0})
    assert opened.structured_content is not None, opened
    await page.goto(on_worker(str(opened.structured_content["url"]), near))
    await expect(page.get_by_test_id("count")).to_have_text("0")
    return Subject(name, near, far, str(opened.structured_content["view"]), "counter_increment")


async def latency(cluster: Cluster, subjects: list[Subject], calls: int, mode: Literal["auto", "legacy"]) -> bool:
    """`calls` interleaved rounds: each subject's same-worker and cross-worker call, one after the other (a change
    on B is followed by work after its answer, e.g. the watching views' refresh, which the next call may meet)."""
    agents: dict[tuple[str, str], Client] = {}
    for subject in subjects:
        for kind, server in (("same worker", subject.near), ("cross worker", subject.far)):
            agents[subject.name, kind] = await cluster.sessions.enter_async_context(Client(server.mcp_url, mode=mode))
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in agents}
    for number in range(calls + WARM_UP):
        for subject in subjects:  # the order alternates: each kind as often right after the other's leftover work
            for kind, delta in ORDERS[number % 2]:
                arguments = subject.arguments(delta)
                into = samples[subject.name, kind] if number >= WARM_UP else []
                await timed(lambda: agents[subject.name, kind].call_tool(subject.tool, arguments), into)  # noqa: B023
    print(f"\n{mode} mode: {calls} interleaved rounds, each call confirmed by the tab on worker B")
    print(f"{'view':<20} {'calls':<13} {'n':>5} {'p50 ms':>8} {'p99 ms':>8}")
    added: dict[str, float] = {}
    for subject in subjects:
        label = "inventory (BER)" if subject.name == "inventory" else "counter (floor)"
        for kind in ("same worker", "cross worker"):
            values = samples[subject.name, kind]
            p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
            print(f"{label:<20} {kind:<13} {len(values):>5} {p50:>8.2f} {p99:>8.2f}")
        same, cross = samples[subject.name, "same worker"], samples[subject.name, "cross worker"]
        added[subject.name] = percentile(cross, 0.5) - percentile(same, 0.5)
        low, high = _interval(same, cross)
        paired = percentile([far - near for near, far in zip(same, cross, strict=True)], 0.5)
        print(
            f"{label:<20} cross adds {added[subject.name]:+.2f} ms at p50 (95 % interval {low:+.2f} to {high:+.2f};"
            f" median of the rounds' differences {paired:+.2f})"
        )
    ok = added["inventory"] <= CROSS_P50_MS
    floor = f" (counter floor: {added['counter']:+.2f} ms)" if "counter" in added else ""
    print(
        f"inventory: cross-worker adds {added['inventory']:+.2f} ms at p50{floor}; target ≤ {CROSS_P50_MS} ms"
        f" — {'met' if ok else 'MISSED'}"
    )
    return ok


def _interval(same: list[float], cross: list[float], draws: int = 1000) -> tuple[float, float]:
    """A bootstrap 95 % interval of p50(cross) − p50(same), resampling whole rounds: on 2 shared cores one p50 of
    500 calls moves by about a millisecond from run to run, as much as the difference measured."""
    pick = random.Random(0)
    rounds = range(len(same))
    differences = []
    for _ in range(draws):
        chosen = pick.choices(rounds, k=len(same))
        differences.append(percentile([cross[i] for i in chosen], 0.5) - percentile([same[i] for i in chosen], 0.5))
    return percentile(differences, 0.025), percentile(differences, 0.975)


def worker_args(name: str, redis_url: str) -> tuple[str, ...]:
    return ("--redis-url", redis_url, "--worker-id", name, *SETTINGS)


async def run(calls: int, views: int, floor: bool, parts: Collection[str]) -> bool:
    redis = start_redis()
    try:
        with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
            db = Path(folder) / "inventory.db"

            def worker(name: str, app: str = INVENTORY, database: Path = db) -> RunningServer:
                return stack.enter_context(run_server(*worker_args(name, redis.url), app=app, db=database))

            one, two = worker("A"), worker("B")
            counters = [worker(name, COUNTER, Path(folder) / "counter.db") for name in ("cA", "cB")] if floor else []
            async with async_playwright() as playwright:
                browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                cluster = Cluster(browser, one, two, redis, db, lambda name: worker(name))
                try:
                    async with cluster.sessions:
                        subjects = [await open_subject(cluster, browser, "inventory", two, one)]
                        if counters:
                            subjects.append(await open_subject(cluster, browser, "counter", counters[1], counters[0]))
                        met = [await latency(cluster, subjects, calls, mode) for mode in MODES if "latency" in parts]
                        if "commands" in parts:
                            met.append(await commands(cluster, subjects[0].view))
                        if "traffic" in parts:
                            met.append(await traffic(redis.port))
                        if "failures" in parts:
                            met.append(await failures(cluster))
                        if "capacity" in parts:
                            await capacity(cluster, views)
                finally:
                    await browser.close()
            return all(met)
    finally:
        redis.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=500, help="rounds per mode (default 500)")
    parser.add_argument("--views", type=int, default=100, help="open views for the capacity figures (default 100)")
    parser.add_argument("--no-floor", action="store_true", help="leave out the counter app's floor")
    parser.add_argument("--only", choices=PARTS, action="append", help="run only these parts (repeatable)")
    args = parser.parse_args()
    return 0 if asyncio.run(run(args.calls, args.views, not args.no_floor, args.only or PARTS)) else 1


if __name__ == "__main__":
    sys.exit(main())
