"""The parts of `bench.cluster` after the latency run: Redis commands per call, the time to the failure codes, and
RSS and call latency per worker with many open views."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from mcp import Client
from playwright.async_api import Browser, expect

from tests.support.cluster import on_worker
from tests.support.e2e import RunningServer
from tests.support.light_tab import LightTabs
from tests.support.redis import RedisServer
from webapp.calllog import TOPIC as CALLS_TOPIC

__all__ = ["INVENTORY", "Cluster", "capacity", "commands", "failures", "percentile", "timed"]

INVENTORY = "views.inventory:build"
FAIL_FAST_MS = 100.0  # time to VIEW_UNAVAILABLE / BRIDGE_UNAVAILABLE
DOOMED = 5  # views on the worker that is killed
COUNTED = 100  # calls of each kind in the command count
WARM_UP = 20  # calls of each kind before it
_MARK = "bench-window-end"


@dataclass
class Cluster:
    """The running set-up: the browser, workers A (`one`) and B (`two`) with the inventory, Redis, the database."""

    browser: Browser
    one: RunningServer
    two: RunningServer
    redis: RedisServer
    db: Path
    spawn: Callable[[str], RunningServer]  # another inventory worker on the same database and Redis
    sessions: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)
    """MCP clients open until the end (one legacy session per opened view: an opening call never reuses another)."""


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def timed(call: Callable[[], Awaitable[Any]], into: list[float], *, error: str | None = None) -> None:
    started = time.perf_counter()
    result = await call()
    into.append((time.perf_counter() - started) * 1000)
    text = result.content[0].text if result.content else ""
    if error is None and result.is_error:
        raise RuntimeError(f"a benchmark call failed: {text}")
    if error is not None and (not result.is_error or f'code="{error}"' not in text):
        raise RuntimeError(f"expected {error}, got: {text}")


async def new_view(cluster: Cluster, worker: RunningServer) -> str:
    """A new BER inventory view opened on worker A in a session of its own, its Chromium tab on `worker`."""
    opener = await cluster.sessions.enter_async_context(Client(cluster.one.mcp_url, mode="legacy"))
    opened = await opener.call_tool("inventory", {"warehouse_code": "BER"})
    assert opened.structured_content is not None, opened
    page = await (await cluster.browser.new_context()).new_page()
    await page.goto(on_worker(str(opened.structured_content["url"]), worker))
    await expect(page.get_by_test_id("row-count")).not_to_have_text("0 items shown")
    return str(opened.structured_content["view"])


def _kind(entry: dict[str, Any]) -> str | None:
    """What a command seen by MONITOR was for; None for directory and heartbeat bookkeeping (claims, releases,
    heartbeats and the looks at them, new connections' HELLO)."""
    words = str(entry["command"]).split(" ", 2)
    name, first = words[0].lower(), words[1] if len(words) > 1 else ""
    if name == "spublish" and first.endswith(":inbox"):
        return "request SPUBLISH" if '"kind":"call"' in str(entry["command"]) else "reply SPUBLISH"
    if name == "spublish":  # an app event: a stock change, or a call's record for the other workers' viewers
        return "call-record SPUBLISH" if f'"{CALLS_TOPIC}"' in str(entry["command"]) else "app-event SPUBLISH"
    if entry["client_type"] == "lua" or name in ("incr", "set", "echo", "evalsha", "del", "mget", "hello"):
        return None
    if name == "get" and first.endswith(":own"):
        return "directory GET"
    return " ".join(words[:2]).upper() if name == "pubsub" else name.upper()


async def _monitored(port: int, calls: Callable[[], Awaitable[None]]) -> Counter[str]:
    """The commands Redis ran while `calls` ran (MONITOR, up to a marker sent after them), by `_kind`."""
    client, marker = aioredis.Redis(port=port), aioredis.Redis(port=port)
    seen: Counter[str] = Counter()
    try:
        await marker.ping()  # connected before the window: its HELLO is not counted
        async with client.monitor() as monitor:

            async def read() -> None:
                async for entry in monitor.listen():
                    if entry["command"] == f"ECHO {_MARK}":
                        return
                    kind = _kind(dict(entry))
                    if kind is not None:
                        seen[kind] += 1

            reader = asyncio.create_task(read())
            await calls()
            await marker.echo(_MARK)
            async with asyncio.timeout(10):
                await reader
    finally:
        await client.aclose()
        await marker.aclose()
    return seen


async def commands(cluster: Cluster, view: str) -> bool:
    """Redis commands per `inventory_adjust_stock` on the BER view (tab on B): through B, then through A."""
    rows: dict[str, Counter[str]] = {}
    viewer = None
    for name, server in (("same worker", cluster.two), ("cross worker", cluster.one), ("/viewer open", cluster.two)):
        if name == "/viewer open":  # a person watches the call log on worker A: records are wanted elsewhere
            viewer = await (await cluster.browser.new_context()).new_page()
            await viewer.goto(cluster.one.base_url + "/viewer")
        agent = await cluster.sessions.enter_async_context(Client(server.mcp_url))

        async def calls(agent: Client = agent, count: int = COUNTED) -> None:
            for number in range(count):
                arguments = {"_view": view, "sku": "FST-1001", "delta": 1 - 2 * (number % 2), "reason": "Cycle count"}
                result = await agent.call_tool("inventory_adjust_stock", arguments)
                if result.is_error:
                    raise RuntimeError(f"a benchmark call failed: {result}")

        await calls(count=WARM_UP)  # the workers' connection pools open what they need (a HELLO each) before the count
        rows[name] = await _monitored(cluster.redis.port, calls)
    print(f"\nRedis commands per inventory_adjust_stock ({COUNTED} each, MONITOR; claims, heartbeats left out)")
    for name, seen in rows.items():
        counts = ", ".join(f"{kind} {count / COUNTED:g}" for kind, count in sorted(seen.items()))
        trips = sum(seen.values()) / COUNTED
        print(f"{name:<13} {counts or 'none'}; round trips to Redis: {trips:g}")
    if viewer is not None:
        await viewer.context.close()
    bridge = {kind: count for kind, count in rows["same worker"].items() if "SPUBLISH" not in kind or "request" in kind}
    ok = not bridge
    print(f"a call to a view on its own worker sends no bridge command — {'met' if ok else 'MISSED'}")
    for row, target in (("same worker", 1), ("/viewer open", 2)):
        seen = rows[row]
        change, record = seen["app-event SPUBLISH"] / COUNTED, seen["call-record SPUBLISH"] / COUNTED
        met = change + record <= target
        ok = ok and met
        print(
            f"shard publishes per stock change by an agent ({'no /viewer open' if target == 1 else row}):"
            f" {change + record:g} (the change {change:g}, its call record {record:g}); target ≤ {target}"
            f" — {'met' if met else 'MISSED'}"
        )
    return ok


async def failures(cluster: Cluster) -> bool:
    """The first call to each view of a killed worker (VIEW_UNAVAILABLE), then 20 calls without Redis."""
    samples: dict[str, list[float]] = {"VIEW_UNAVAILABLE": [], "BRIDGE_UNAVAILABLE": []}
    agent = await cluster.sessions.enter_async_context(Client(cluster.one.mcp_url))

    async def fails(view: str, code: str, times: int) -> None:
        arguments = {"_view": view, "sku": "FST-1001", "delta": 1, "reason": "Cycle count"}
        for _ in range(times):
            await timed(lambda: agent.call_tool("inventory_adjust_stock", arguments), samples[code], error=code)

    three = cluster.spawn("C")
    doomed = [await new_view(cluster, three) for _ in range(DOOMED)]
    three.process.send_signal(signal.SIGKILL)
    three.process.wait()
    for view in doomed:  # the first call to each: the next ones wait for its tab to come back elsewhere
        await fails(view, "VIEW_UNAVAILABLE", 1)
    far = await new_view(cluster, cluster.two)
    cluster.redis.stop()
    try:
        await fails(far, "BRIDGE_UNAVAILABLE", 20)
    finally:
        cluster.redis.start()
    print(
        f"\ntime to the error (ms; the first call to each of {DOOMED} views of a killed worker — the exact receiver"
        " count of its inbox's SPUBLISH, not the heartbeat's TTL — and 20 calls without Redis)"
    )
    ok = True
    for code, values in samples.items():
        worst = max(values)
        print(f"{code:<19} first {values[0]:>7.2f}  p50 {percentile(values, 0.5):>7.2f}  max {worst:>7.2f}")
        ok = ok and worst <= FAIL_FAST_MS
    print(f"target ≤ {FAIL_FAST_MS:g} ms — {'met' if ok else 'MISSED'}")
    return ok


def rss_mb(server: RunningServer) -> float:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def capacity(cluster: Cluster, views: int) -> None:
    """RSS per worker before and with `views` more open inventory views (light tabs, half on each worker), and the
    latency of a plain call (`warehouses list`) on each then: a proxy for its event-loop lag."""
    workers = {"A": cluster.one, "B": cluster.two}
    before = {name: rss_mb(server) for name, server in workers.items()}
    tabs = [LightTabs(server.base_url + "/inventory") for server in workers.values()]
    try:
        for opened in tabs:
            await opened.open(views // 2)
        print(f"\n{views} more open views, {views // 2} per worker (light tabs: page load and socket handshake)")
        for name, server in workers.items():
            client = await cluster.sessions.enter_async_context(Client(server.mcp_url))
            plain: list[float] = []
            for _ in range(200):
                await timed(lambda c=client: c.call_tool("warehouses", {"action": "list"}), plain)
            now = rss_mb(server)
            per_view = (now - before[name]) / (views // 2) * 1024
            print(
                f"worker {name}: RSS {before[name]:.0f} → {now:.0f} MB ({per_view:.0f} KB per view);"
                f" warehouses list p50 {percentile(plain, 0.5):.2f} ms,"
                f" p99 {percentile(plain, 0.99):.2f} ms"
            )
    finally:
        for opened in tabs:
            opened.close()
