"""The collector run of `bench.inventory`: a plain call's latency under load over a long run, with Python's
collector thresholds and with raised ones (which `serve` would set if they helped; it keeps Python's)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from mcp import Client

from bench.support.latency import percentile
from tests.support.e2e import REPO, run_server
from tests.support.light_tab import LightTabs

__all__ = ["collector"]

RAISED = (50_000, 20, 100)
_HOOK = Path(__file__).with_name("gc_hook")


async def _under_load(url: str, views: int, calls: int) -> list[float]:
    """`calls` plain calls (ms) while `views` light tabs watch a warehouse an agent changes every 250 ms."""
    async with Client(url + "/mcp") as agent, Client(url + "/mcp") as actor:
        opened = await actor.call_tool("inventory", {"warehouse_code": "BER"})
        assert opened.structured_content is not None
        view = opened.structured_content["view"]
        watchers = LightTabs(url + "/inventory")
        try:
            for count in range(100, views + 1, 100):
                await watchers.open(count)

            async def change() -> None:
                for number in range(10**6):
                    arguments = {"_view": view, "sku": "FST-1001", "delta": 1 - 2 * (number % 2), "reason": "Count"}
                    await actor.call_tool("inventory_adjust_stock", arguments)
                    await asyncio.sleep(0.25)

            changes = asyncio.create_task(change())
            samples: list[float] = []
            try:
                for _ in range(calls):
                    started = time.perf_counter()
                    await agent.call_tool("warehouses", {"action": "list"})
                    samples.append((time.perf_counter() - started) * 1000)
            finally:
                changes.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await changes
        finally:
            watchers.close()
    return samples


def collector(folder: str, views: int = 200, calls: int = 3000) -> bool:
    """Prints the plain call's p50, p99 and max with each setting; a report (always met)."""
    print(f"\n== the collector's thresholds: {calls} plain calls while {views} views watch a change every 250 ms")
    for name, thresholds in (("Python's defaults", ""), (f"raised {RAISED}", ",".join(map(str, RAISED)))):
        env = {"PYTHONPATH": os.pathsep.join([str(_HOOK), str(REPO)]), "BENCH_GC_THRESHOLDS": thresholds}
        with run_server(app="views.inventory:build", db=Path(folder) / f"collector{len(thresholds)}.db", env=env) as s:
            samples = asyncio.run(_under_load(s.base_url, views, calls))
        print(f"  {name:<28} p50 {percentile(samples, 0.5):6.2f} ms   p99 {percentile(samples, 0.99):6.2f} ms   "
              f"max {max(samples):6.1f} ms")  # fmt: skip
    return True
