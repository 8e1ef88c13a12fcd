"""The framework's floor: latency of action calls into a live view, relative to a plain tool on the same server.

Two servers run the counter test app, one confirming each change with a browser round trip (the default) and one
without (`--no-browser-confirm`); each has one live view in headless Chromium. The calls are interleaved: per round,
one action (`counter_increment`, a structured result) and one plain tool (`ping`) on each server, and a read-only
action (`counter_peek`: nothing to confirm) on the confirming one. Both protocol
modes are measured (a legacy session and the default sessionless client); a plain tool with the action's input and
structured result measures the same as `ping`, so the ratios show what the view adds.
It is a report, with no target: its confirmed action is one browser round trip, the floor the inventory's figures
are compared with (`bench.inventory`). Then the floor's breakdown: timestamps on both sides of each confirmed
action (client, tab, the server's call log), printed per segment (`bench.support.floor`).
Run: `.venv/bin/python -m bench.bridge [--calls 200]`; the exit code is 0 unless a run failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from mcp import Client
from playwright.async_api import Page, async_playwright, expect

from bench.support.floor import floor_breakdown
from tests.support.e2e import RunningServer, run_server

APP = "tests.support.test_app:build"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
MODES: tuple[Literal["auto", "legacy"], ...] = ("auto", "legacy")
# each kind of call: the servers that served it ("confirm", "plain") and its tool
SERVED_BY = {
    "confirm": (("confirm",), "counter_increment"),
    "no-confirm": (("plain",), "counter_increment"),
    "read-only": (("confirm",), "counter_peek"),
    "plain tool": (("confirm", "plain"), "ping"),
}


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def timed(call: Callable[[], Awaitable[Any]], into: list[float]) -> None:
    started = time.perf_counter()
    result = await call()
    into.append((time.perf_counter() - started) * 1000)
    if getattr(result, "is_error", False):
        raise RuntimeError(f"a benchmark call failed: {result}")


async def live_view(client: Client, page: Page) -> str:
    opened = await client.call_tool("counter", {"start": 0})
    assert opened.structured_content is not None
    await page.goto(str(opened.structured_content["url"]))
    await expect(page.get_by_test_id("count")).to_have_text("0")
    return str(opened.structured_content["view"])


async def measure(
    confirming: RunningServer, plain: RunningServer, calls: int, mode: Literal["auto", "legacy"]
) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"confirm": [], "no-confirm": [], "read-only": [], "plain tool": []}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            async with Client(confirming.mcp_url, mode=mode) as first, Client(plain.mcp_url, mode=mode) as second:
                pages = [await browser.new_page(), await browser.new_page()]
                views = [await live_view(first, pages[0]), await live_view(second, pages[1])]
                for client, view in ((first, views[0]), (second, views[1])):  # warm up both paths
                    for _ in range(20):
                        await client.call_tool("counter_increment", {"_view": view})
                        await client.call_tool("ping", {})
                for _ in range(calls):
                    await timed(lambda: first.call_tool("counter_increment", {"_view": views[0]}), samples["confirm"])
                    await timed(lambda: first.call_tool("ping", {}), samples["plain tool"])
                    await timed(lambda: first.call_tool("counter_peek", {"_view": views[0]}), samples["read-only"])
                    await timed(
                        lambda: second.call_tool("counter_increment", {"_view": views[1]}), samples["no-confirm"]
                    )
                    await timed(lambda: second.call_tool("ping", {}), samples["plain tool"])
                count = (await first.call_tool("counter_increment", {"_view": views[0], "by": 1})).structured_content
                assert count == {"count": 21 + calls}
        finally:
            await browser.close()
    return samples


def server_side(dbs: dict[str, Path], mode: str) -> dict[str, list[float]]:
    """The servers' own durations of each kind of call in `mode` (the call log's `duration_ms`: from the tool call's
    start to its result, the browser round trip included, HTTP and the MCP layers not)."""
    sessionless = mode == "auto"
    durations: dict[str, list[float]] = {}
    for name, (servers, tool) in SERVED_BY.items():
        durations[name] = []
        for server in servers:
            with contextlib.closing(sqlite3.connect(dbs[server])) as db:
                rows = db.execute(
                    "SELECT duration_ms FROM webapp_calls WHERE tool = ? AND (session_id IS NULL) = ?",
                    (tool, sessionless),
                )
                durations[name] += [row[0] for row in rows]
    return durations


def report(mode: str, samples: dict[str, list[float]], server: dict[str, list[float]]) -> None:
    base = {name: percentile(samples["plain tool"], q) for name, q in (("p50", 0.5), ("p99", 0.99))}
    print(f"\n{mode} mode (server ms: the p50 of the time spent in the tool call on the server)")
    print(f"{'calls':<12} {'n':>4} {'p50 ms':>8} {'p99 ms':>8} {'p50 ×':>7} {'p99 ×':>7} {'server ms':>10}")
    for name, values in samples.items():
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        print(
            f"{name:<12} {len(values):>4} {p50:>8.2f} {p99:>8.2f} {p50 / base['p50']:>7.2f} {p99 / base['p99']:>7.2f}"
            f" {percentile(server[name], 0.5):>10.2f}"
        )
    print(f"mean plain tool {statistics.fmean(samples['plain tool']):.2f} ms")
    print("the confirmed action is one browser round trip: the floor of every call that changes a live view")


async def breakdown(confirming: RunningServer, db: Path, calls: int) -> None:
    """The floor's segments on a fresh counter view of the confirming server (default protocol mode)."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            async with Client(confirming.mcp_url) as client:
                page = await browser.new_page()
                view = await live_view(client, page)
                for _ in range(20):  # warm-up
                    await client.call_tool("counter_increment", {"_view": view})
                print("\nthe floor's breakdown:", end="")
                await floor_breakdown(client, page, db, calls, "counter_increment", lambda _: {"_view": view})
        finally:
            await browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="calls of each kind (default 200)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        dbs = {"confirm": Path(folder) / "confirm.db", "plain": Path(folder) / "plain.db"}
        confirming = stack.enter_context(run_server(app=APP, db=dbs["confirm"]))
        plain = stack.enter_context(run_server("--no-browser-confirm", app=APP, db=dbs["plain"]))
        results = {mode: asyncio.run(measure(confirming, plain, args.calls, mode)) for mode in MODES}
        for mode, samples in results.items():
            report(mode, samples, server_side(dbs, mode))
        asyncio.run(breakdown(confirming, dbs["confirm"], args.calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
