"""The burst run of `bench.inventory`: a burst of changes costs a watching view a few updates, not one each.

An agent starts 100 stock changes in one second (one every 10 ms, each call started on time whatever the ones before
it take) on its view, itself in a light tab (a Chromium tab drawing every change would hold the burst to its pace on
two cores), while light tabs watch the warehouse; each watching tab counts the socket messages it receives
from the burst's start until the server has gone quiet (the chart's late draw included). With `--view-coalesce` at
its default (0.1 s) a watching view gets the first change at once and then one update per interval.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from mcp import Client

from bench.support.fanout import SKU, cpu_seconds
from tests.support.e2e import RunningServer
from tests.support.light_tab import LightTab, LightTabs

__all__ = ["agent_in_light_tab", "burst"]

CHANGES, SECONDS, WATCHERS, TARGET_UPDATES = 100, 1.0, 20, 12
QUIET = 1.5  # seconds without a message that end the count: longer than the chart's wait for its late draw


async def _quiet(watchers: LightTabs, count: int) -> list[int]:
    """The tabs' message counts once none has grown for QUIET seconds (at most 30 s)."""
    counts = await watchers.open(count)
    async with asyncio.timeout(30):
        while True:
            await asyncio.sleep(QUIET)
            now = await watchers.open(count)
            if now == counts:
                return now
            counts = now


@asynccontextmanager
async def agent_in_light_tab(server: RunningServer) -> AsyncGenerator[tuple[Client, str]]:
    """An agent and its inventory view, open in a light tab of this process."""
    async with Client(server.mcp_url) as agent:
        opened = (await agent.call_tool("inventory", {"warehouse_code": "BER"})).structured_content
        assert opened is not None
        tab = LightTab(str(opened["url"]))
        await tab.open()
        try:
            yield agent, str(opened["view"])
        finally:
            await tab.close()


async def burst(server: RunningServer) -> bool:
    print(f"\n== burst: {CHANGES} changes started in {SECONDS:.0f} s, {WATCHERS} light tabs watching")
    pid = server.process.pid
    async with agent_in_light_tab(server) as (agent, view):
        watchers = LightTabs(server.base_url + "/inventory")
        try:
            await watchers.open(WATCHERS)
            before = await _quiet(watchers, WATCHERS)
            cpu, loop = cpu_seconds(pid), asyncio.get_running_loop()
            started = loop.time()
            calls: list[asyncio.Task[object]] = []
            for number in range(CHANGES):
                await asyncio.sleep(max(0.0, started + number * SECONDS / CHANGES - loop.time()))
                arguments = {"_view": view, "sku": SKU, "delta": 1 if number % 2 == 0 else -1, "reason": "Burst"}
                calls.append(asyncio.ensure_future(agent.call_tool("inventory_adjust_stock", arguments)))
            results = await asyncio.gather(*calls)
            answered = loop.time() - started
            if any(getattr(result, "is_error", False) for result in results):
                raise RuntimeError("a burst change failed")
            after = await _quiet(watchers, WATCHERS)
            cpu = cpu_seconds(pid) - cpu
        finally:
            watchers.close()
    updates = [now - then for now, then in zip(after, before, strict=True)]
    print(f"the burst's calls all answered {answered:.2f} s after the first started")
    print(f"updates a watching tab received: min {min(updates)}, max {max(updates)} (target ≤ {TARGET_UPDATES})")
    print(f"server CPU for the burst: {cpu:.2f} s ({cpu * 1000 / CHANGES:.1f} ms per change, all views)")
    return min(updates) > 0 and max(updates) <= TARGET_UPDATES
