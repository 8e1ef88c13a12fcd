"""This checkout against an earlier commit, in one interleaved run: did a change make the product slower?

`REF` is checked out into a temporary `git worktree` (`bench.support.worktree`: its own venv and npm packages,
cached under `build/regress/`, and its bundles built). Each checkout serves the inventory on a database of its own
with one Chromium tab on a view; the `mcp` SDK's own low-level server serves a plain tool beside them (no webapp code
on its path: the yardstick neither checkout moves). Every round calls each figure of each checkout and the SDK's
tool once, in a new (seeded) random order; the first `--warmup` rounds are not counted.

Figures (p50 over `--calls` rounds, milliseconds):
- view action: `inventory_refresh_stock`, confirmed by the view's Chromium tab;
- plain tool: `warehouses {"action": "list"}`;
- forwarded call: `inventory_adjust_stock` through worker w1 on a view whose Chromium tab is on worker w2 (two workers
  per checkout on a Redis of their own, as `bench.cluster` measures it; `--no-cluster` leaves it out): at most
  `FORWARDED_ADDED_MS` more than REF's;
- view action ÷ SDK: the view action against the SDK's plain tool (`bench.inventory --only latency` holds this
  checkout to ≤ 1.1 × the ratio c25359e reached, its `SDK_RATIO`).

`--latency` runs `bench.inventory --only latency`'s code against REF's servers instead (the inventory and the counter
app of REF, the SDK's server of this checkout): how `SDK_RATIO`, the guard's constant, was measured.

A figure more than 10 % worse than REF's, beyond its allowance (`ALLOWANCE_MS`: a cost a change was found to need,
documented on the performance page), fails the run. Run before a release, against the commit the last one was
measured on: `.venv/bin/python -m bench.regress REF [--calls 200]` (about 3 minutes, the first run of a REF with a
new `pyproject.toml` longer: it installs a venv).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcp import Client
from playwright.async_api import Browser, Page, async_playwright, expect

from bench.support.latency import CHROMIUM_ARGS, latency, open_inventory, percentile, timed
from bench.support.sdk_server import TOOL as SDK_TOOL
from bench.support.sdk_server import sdk_server
from bench.support.worktree import worktree
from tests.support.cluster import on_worker
from tests.support.e2e import Checkout, RunningServer, run_server
from tests.support.redis import start_redis

VIEW, PLAIN, FORWARDED, RATIO = "view action", "plain tool", "forwarded call", "view action ÷ SDK"
INVENTORY, COUNTER = "views.inventory:build", "tests.support.test_app:build"
WORSE = 1.10  # a figure more than 10 % above REF's fails
ALLOWANCE_MS: dict[str, float] = {}  # figure → ms a change was found to need (the performance page says which)
FORWARDED_ADDED_MS = 0.5  # a forwarded call may cost at most this much more than REF's (apps.md §14.2's price)


@dataclass
class _Side:
    """One checkout's servers (one inventory, and two workers of it on a Redis of their own), its agents and the
    views their tabs show."""

    name: str
    server: RunningServer
    workers: tuple[RunningServer, RunningServer] | None = None
    agent: Client | None = None
    far: Client | None = None  # an agent on w1, for the view whose tab is on w2
    view: str = ""
    held_elsewhere: str = ""
    samples: dict[str, list[float]] = field(default_factory=lambda: {VIEW: [], PLAIN: [], FORWARDED: []})
    _turn: int = 0

    def calls(self) -> dict[str, Callable[[], Awaitable[Any]]]:
        agent, far = self.agent, self.far
        assert agent is not None
        calls: dict[str, Callable[[], Awaitable[Any]]] = {
            VIEW: lambda: agent.call_tool("inventory_refresh_stock", {"_view": self.view}),
            PLAIN: lambda: agent.call_tool("warehouses", {"action": "list"}),
        }
        if far is not None:
            self._turn += 1
            change = {"_view": self.held_elsewhere, "sku": "FST-1001", "delta": 1 - 2 * (self._turn % 2)}
            calls[FORWARDED] = lambda: far.call_tool("inventory_adjust_stock", {**change, "reason": "Cycle count"})
        return calls


@contextlib.contextmanager
def _workers(folder: Path, name: str, checkout: Checkout) -> Generator[tuple[RunningServer, RunningServer]]:
    """Workers w1 and w2 of `checkout`'s inventory on a database and a Redis of their own."""
    redis = start_redis()
    try:
        argv = ("--redis-url", redis.url)
        db = folder / f"{name}-cluster.db"
        with (
            run_server(*argv, "--worker-id", "w1", app=INVENTORY, db=db, checkout=checkout) as one,
            run_server(*argv, "--worker-id", "w2", app=INVENTORY, db=db, checkout=checkout) as two,
        ):
            yield one, two
    finally:
        redis.close()


@contextlib.contextmanager
def _servers(ref: str, folder: Path, cluster: bool) -> Generator[tuple[_Side, _Side, RunningServer]]:
    with contextlib.ExitStack() as stack:
        old = stack.enter_context(worktree(ref))
        sides = []
        for name, checkout in ((ref, old), ("HEAD", Checkout())):
            server = stack.enter_context(run_server(app=INVENTORY, db=folder / f"{name}.db", checkout=checkout))
            workers = stack.enter_context(_workers(folder, name, checkout)) if cluster else None
            sides.append(_Side(name, server, workers))
        yield sides[0], sides[1], stack.enter_context(sdk_server())


async def _measure(
    browser: Browser, sides: list[_Side], sdk: RunningServer, calls: int, warmup: int, mode: Literal["auto", "legacy"]
) -> list[float]:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    sdk_samples: list[float] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            for side in sides:
                side.agent = await stack.enter_async_context(Client(side.server.mcp_url, mode=mode))
                side.view = await open_inventory(side.agent, await context.new_page(), warehouse_code="BER")
                if side.workers is not None:
                    side.far = await stack.enter_async_context(Client(side.workers[0].mcp_url, mode=mode))
                    side.held_elsewhere = await _opened_on(side.far, await context.new_page(), side.workers[1])
            plain = await stack.enter_async_context(Client(sdk.mcp_url, mode=mode))
            order = random.Random(calls)
            for number in range(warmup + calls):
                round_calls = [
                    (side.samples[figure] if number >= warmup else [], call)
                    for side in sides
                    for figure, call in side.calls().items()
                ]
                round_calls.append(
                    (sdk_samples if number >= warmup else [], lambda: plain.call_tool(SDK_TOOL, {"action": "list"}))
                )
                order.shuffle(round_calls)
                for into, call in round_calls:
                    await timed(call, into)
    finally:
        await context.close()
    return sdk_samples


async def _opened_on(agent: Client, page: Page, worker: RunningServer) -> str:
    """A view opened by `agent`, its tab on `worker` (as a balancer would send it there); its handle."""
    opened = await agent.call_tool("inventory", {"warehouse_code": "BER"})
    assert opened.structured_content is not None, opened
    await page.goto(on_worker(str(opened.structured_content["url"]), worker))
    await expect(page.get_by_test_id("row-count")).not_to_have_text("0 items shown")
    return str(opened.structured_content["view"])


def _report(ref: str, before: _Side, now: _Side, sdk: list[float]) -> bool:
    sdk50 = statistics.median(sdk)
    print(f"\nthe SDK's plain tool: p50 {sdk50:.2f} ms, p90 {percentile(sdk, 0.9):.2f} ms")
    print(f"{'figure (p50; p90)':<20} {ref:>18} {'HEAD':>18} {'HEAD ÷ ref':>11} {'allowance':>10}")
    ok = True
    for name in (VIEW, PLAIN, FORWARDED):
        if not now.samples[name]:
            continue
        (old, old90), (new, new90) = (_figure(side.samples[name]) for side in (before, now))
        allowance = ALLOWANCE_MS.get(name, 0.0)
        worse = new > old * WORSE + allowance
        if name == FORWARDED:
            worse = worse or new - old > FORWARDED_ADDED_MS
        ok = ok and not worse
        print(
            f"{name:<20} {old:>7.2f}; {old90:>6.2f} ms {new:>7.2f}; {new90:>6.2f} ms {new / old:>10.2f}× "
            f"{allowance:>7.1f} ms{'  WORSE' * worse}"
        )
    if now.samples[FORWARDED]:
        added = statistics.median(now.samples[FORWARDED]) - statistics.median(before.samples[FORWARDED])
        print(f"{FORWARDED}: {added:+.2f} ms against {ref}'s (target ≤ {FORWARDED_ADDED_MS:+.1f} ms)")
    ratios = [statistics.median(side.samples[VIEW]) / sdk50 for side in (before, now)]
    print(f"{RATIO:<20} {ratios[0]:>17.2f}× {ratios[1]:>17.2f}× {ratios[1] / ratios[0]:>10.2f}×")
    verdict = "met" if ok else "MISSED"
    print(f"target: no figure more than {WORSE - 1:.0%} worse than {ref}'s beyond its allowance — {verdict}")
    return ok


def _figure(samples: list[float]) -> tuple[float, float]:
    return statistics.median(samples), percentile(samples, 0.9)


async def _run(ref: str, calls: int, warmup: int, mode: Literal["auto", "legacy"], cluster: bool) -> bool:
    with tempfile.TemporaryDirectory() as folder, _servers(ref, Path(folder), cluster) as (before, now, sdk):
        sides = [before, now]
        print(f"== {calls} interleaved rounds ({warmup} warm-up), {mode} protocol mode: {ref} against this checkout")
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            try:
                sdk_samples = await _measure(browser, sides, sdk, calls, warmup, mode)
            finally:
                await browser.close()
        return _report(ref, sides[0], sides[1], sdk_samples)


def _latency_of(ref: str, calls: int) -> bool:
    """`bench.inventory --only latency` against REF's inventory and counter app."""
    with (
        tempfile.TemporaryDirectory() as folder,
        worktree(ref) as old,
        run_server(app=INVENTORY, db=Path(folder) / "inventory.db", checkout=old) as inventory,
        run_server(app=COUNTER, db=Path(folder) / "counter.db", checkout=old) as counter,
        sdk_server() as sdk,
    ):
        print(f"== bench.inventory's latency run against {ref}'s servers")
        return asyncio.run(latency((inventory, counter, sdk), calls, None))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ref", help="the commit to compare with (a hash, tag or branch)")
    parser.add_argument("--calls", type=int, default=200, help="counted rounds (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="rounds before counting (default 20)")
    parser.add_argument("--mode", choices=("auto", "legacy"), default="auto", help="the MCP client's protocol mode")
    parser.add_argument("--latency", action="store_true", help="bench.inventory's latency run against REF instead")
    parser.add_argument("--no-cluster", action="store_true", help="leave out the forwarded call (no Redis, 2 workers)")
    args = parser.parse_args()
    if args.latency:
        _latency_of(args.ref, args.calls)
        return 0
    return 0 if asyncio.run(_run(args.ref, args.calls, args.warmup, args.mode, not args.no_cluster)) else 1


if __name__ == "__main__":
    sys.exit(main())
