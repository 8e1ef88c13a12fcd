"""The latency run of `bench.inventory`: every inventory call on live Chromium tabs beside the plain baseline and
the counter app's floor and the `mcp` SDK's own low-level server's plain tool, interleaved, in both protocol modes.

The SDK's tool is the yardstick that does not move with the framework (the floor is built on it): the view action
(`inventory_refresh_stock` on its tab) ÷ the SDK's tool is held to ≤ 1.1 × `SDK_RATIO`, the ratio this code measured
on a c25359e worktree (`python -m bench.regress c25359e --latency`: every view action was ~4 ms faster then).

Each round calls them in a new (seeded) random order: a call shares the two cores with the tabs' drawing of the call
before it, so a fixed order would charge each call for its fixed predecessor (the floor always followed the plain
call, which draws nothing, and the call after the floor paid for the counter tab's drawing)."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from mcp import Client
from playwright.async_api import Browser, Page, async_playwright, expect

from bench.support.floor import floor_breakdown
from bench.support.sdk_server import TOOL as SDK_TOOL
from tests.support.e2e import RunningServer

__all__ = ["CHROMIUM_ARGS", "SDK_RATIO", "latency", "percentile", "spread", "targets", "timed"]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
TARGET = {"p50": 1.25, "p99": 2.0}  # of the floor: the counter app's confirmed action, same run
MODES: tuple[Literal["auto", "legacy"], ...] = ("auto", "legacy")
BASELINE, FLOOR, SDK, VIEW_ACTION = "warehouses list", "counter (floor)", "SDK plain tool", "refresh_stock"
SDK_RATIO = 1.47  # the view action ÷ the SDK's plain tool (p50) at c25359e: 1.43–1.48× in four runs, 2026-12-07
SDK_SLACK = 1.1


Servers = tuple[RunningServer, RunningServer, RunningServer]
"""The inventory's server, the counter app's (the floor) and the SDK's (the yardstick)."""


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def spread(name: str, samples: list[float], width: int = 44) -> str:
    """One figure's line: its p50, p90 and max."""
    return (
        f"  {name:<{width}} p50 {statistics.median(samples):7.1f} ms   p90 {percentile(samples, 0.9):7.1f} ms   "
        f"max {max(samples):7.1f} ms"
    )


def targets(met: dict[str, bool]) -> int:
    """Print whether each target was met; the exit status, 1 if any was missed."""
    print("targets: " + "; ".join(f"{target}: {'met' if ok else 'MISSED'}" for target, ok in met.items()))
    return 0 if all(met.values()) else 1


async def timed(call: Callable[[], Awaitable[Any]], into: list[float]) -> Any:
    started = time.perf_counter()
    result = await call()
    into.append((time.perf_counter() - started) * 1000)
    if getattr(result, "is_error", False):
        raise RuntimeError(f"a benchmark call failed: {result}")
    return result


async def open_inventory(client: Client, page: Page, **arguments: Any) -> str:
    """Open an inventory view in `page`; returns its handle."""
    opened = await client.call_tool("inventory", arguments)
    assert opened.structured_content is not None, opened
    await page.goto(str(opened.structured_content["url"]))
    await expect(page.get_by_test_id("row-count")).not_to_have_text("0 items shown")
    return str(opened.structured_content["view"])


def _calls(view: str, other: str, round_number: int) -> dict[str, tuple[str, dict[str, Any]]]:
    """The inventory calls of one round; each alternates so that it changes what the view shows every time."""
    flip = round_number % 2 == 0
    return {
        "refresh_stock": ("inventory_refresh_stock", {"_view": view}),
        "adjust_stock": ("inventory_adjust_stock", {"_view": view, "sku": "FST-1001", "delta": 1 if flip else -1,
                                                    "reason": "Cycle count"}),
        "select_item": ("inventory_select_item", {"_view": view, "sku": "TLS-2001" if flip else "TLS-2002"}),
        "stock_report": ("inventory_stock_report", {"_view": view}),
        "export_stock": ("inventory_export_stock", {"_view": view}),
        "transfer_stock": ("inventory_transfer_stock", {"_view": view, "sku": "CLN-8005", "quantity": 1,
                                                        "from_warehouse": "BER" if flip else "HAM",
                                                        "to_warehouse": "HAM" if flip else "BER"}),
        "update": ("inventory_update", {"_view": other, "search": "FST" if flip else "TLS"}),
    }  # fmt: skip


async def _measure(
    browser: Browser, servers: Servers, calls: int, mode: Literal["auto", "legacy"], pause: float
) -> dict[str, list[float]]:
    inventory, counter, sdk = servers
    samples: dict[str, list[float]] = {name: [] for name in (BASELINE, FLOOR, SDK, *_calls("", "", 0))}
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        async with (
            Client(inventory.mcp_url, mode=mode) as agent,
            Client(inventory.mcp_url, mode="legacy") as opener,  # a second caller's view, for the updates
            Client(counter.mcp_url, mode=mode) as plain,
            Client(sdk.mcp_url, mode=mode) as yardstick,
        ):
            other = await open_inventory(opener, await context.new_page(), warehouse_code="MUC")  # first: not reused
            view = await open_inventory(agent, await context.new_page(), warehouse_code="BER")
            assert other != view
            opened = await plain.call_tool("counter", {"start": 0})
            assert opened.structured_content is not None
            counter_page = await context.new_page()
            await counter_page.goto(str(opened.structured_content["url"]))
            await expect(counter_page.get_by_test_id("count")).to_have_text("0")
            counter_view = str(opened.structured_content["view"])
            order = random.Random(mode)  # seeded: every run calls in the same orders
            for round_number in range(calls + 20):  # the first 20 rounds warm up every path
                into = samples if round_number >= 20 else {}
                round_calls: list[tuple[str, Callable[[], Awaitable[Any]]]] = [
                    (BASELINE, lambda: agent.call_tool("warehouses", {"action": "list"})),
                    (FLOOR, lambda: plain.call_tool("counter_increment", {"_view": counter_view})),
                    (SDK, lambda: yardstick.call_tool(SDK_TOOL, {"action": "list"})),
                ]
                for name, (tool, arguments) in _calls(view, other, round_number).items():
                    round_calls.append((name, lambda tool=tool, arguments=arguments: agent.call_tool(tool, arguments)))
                order.shuffle(round_calls)
                for name, call in round_calls:
                    await _after(pause, call, into, name)
    finally:
        await context.close()
    return samples


async def _after(pause: float, call: Callable[[], Awaitable[Any]], into: dict[str, list[float]], name: str) -> None:
    """`call` timed into `into[name]`, after `pause` seconds: with `--pause`, each call starts once the tabs have
    drawn the previous one (a diagnosis; the targets are for calls back to back)."""
    if pause:
        await asyncio.sleep(pause)
    await timed(call, into.setdefault(name, []))


def _report(mode: str, samples: dict[str, list[float]]) -> bool:
    floor = {"p50": percentile(samples[FLOOR], 0.5), "p99": percentile(samples[FLOOR], 0.99)}
    plain = percentile(samples[BASELINE], 0.5)
    print(f"\n{mode} mode: ratios to the {FLOOR} (one confirmed browser round trip) and, beside, to {BASELINE}")
    print(f"{'calls':<16} {'n':>4} {'p50 ms':>8} {'p99 ms':>8} {'p50 ×':>7} {'p99 ×':>7} {'p50 × plain':>12}")
    ok = True
    for name, values in samples.items():
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        ratio50, ratio99 = p50 / floor["p50"], p99 / floor["p99"]
        missed = name not in (BASELINE, FLOOR, SDK) and (ratio50 > TARGET["p50"] or ratio99 > TARGET["p99"])
        ok = ok and not missed
        print(
            f"{name:<16} {len(values):>4} {p50:>8.2f} {p99:>8.2f} {ratio50:>7.2f} {ratio99:>7.2f} {p50 / plain:>12.2f}"
            f"{'  MISSED' * missed}"
        )
    print(
        f"target for every inventory call: p50 ≤ {TARGET['p50']}×, p99 ≤ {TARGET['p99']}× the floor — "
        f"{'met' if ok else 'MISSED'}"
    )
    return _guard(samples) and ok


def _guard(samples: dict[str, list[float]]) -> bool:
    """The view action against the SDK's plain tool, held to `SDK_SLACK` × c25359e's ratio."""
    ratio = percentile(samples[VIEW_ACTION], 0.5) / percentile(samples[SDK], 0.5)
    limit = SDK_SLACK * SDK_RATIO
    met = ratio <= limit
    print(
        f"the guard: {VIEW_ACTION} ÷ the {SDK} (no webapp code) {ratio:.2f}×, target ≤ {limit:.2f}× "
        f"({SDK_SLACK} × c25359e's {SDK_RATIO:.2f}×) — {'met' if met else 'MISSED'}"
    )
    return met


async def _breakdown(browser: Browser, inventory: RunningServer, db: Path, calls: int) -> None:
    """The segments of one adjustment, as `bench.bridge` prints the floor's (default protocol mode)."""
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        async with Client(inventory.mcp_url) as agent:
            view = await open_inventory(agent, await context.new_page(), warehouse_code="HAM")
            page = context.pages[0]

            def adjust(number: int) -> dict[str, Any]:
                return {"_view": view, "sku": "FST-1001", "delta": 1 - 2 * (number % 2), "reason": "Cycle count"}

            for number in range(20):  # warm-up
                await agent.call_tool("inventory_adjust_stock", adjust(number))
            await floor_breakdown(agent, page, db, calls, "inventory_adjust_stock", adjust)
    finally:
        await context.close()


async def latency(servers: Servers, calls: int, db: Path | None, pause: float = 0.0) -> bool:
    """`servers`: the inventory's, the counter app's and the SDK's; `db`: the inventory server's database (its call log
    gives the server's side of the breakdown; None: no breakdown); `pause`: seconds before each call."""
    paused = f", {pause:g} s before each call" if pause else ""
    print(f"== latency: {calls} interleaved rounds per mode (confirmed by the tabs{paused})")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            results = {mode: await _measure(browser, servers, calls, mode, pause) for mode in MODES}
            met = all([_report(mode, samples) for mode, samples in results.items()])
            if db is not None:
                print("\nthe adjustment's breakdown (the floor's: bench.bridge):", end="")
                await _breakdown(browser, servers[0], db, calls)
        finally:
            await browser.close()
    return met
