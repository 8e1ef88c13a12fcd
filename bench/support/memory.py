"""The memory run of `bench.inventory`: the server's RSS per open view, each view with a Chromium tab attached (what a
person's tab costs the server: its socket, with the per-message compression the browser asks for, and its view).

One run reads the RSS after 10, 30 and 50 open views, each reading after `changes` adjustments at 2/s and an idle
spell (the collector and the allocator settle), and takes the slope; the figure is the median of `runs` runs, each on a
server of its own."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
from collections.abc import Callable

from playwright.async_api import Browser, Page, expect

from bench.support.fanout import adjustments, agent_tab, new_tab, rss_mb
from tests.support.e2e import RunningServer

__all__ = ["TARGET_MB", "memory"]

TARGET_MB = 1.0
SIZES = (10, 30, 50)


async def _watchers(browser: Browser, url: str, count: int) -> list[Page]:
    """`count` more Chromium tabs on `url`, each a view of its own, once each shows its rows."""
    pages = [await new_tab(browser) for _ in range(count)]
    for page in pages:
        await page.goto(url)
    for page in pages:
        await expect(page.get_by_test_id("row-count")).not_to_have_text("0 items shown", timeout=60_000)
    return pages


async def _slope(server: RunningServer, changes: int, idle: float) -> float:
    """One run's memory per open view (MB), the readings printed."""
    readings: dict[int, float] = {}
    async with agent_tab(server) as (agent, view, browser, _page):
        opened = 1  # the agent's own view
        for size in SIZES:
            await _watchers(browser, server.base_url + "/inventory", size - opened)
            opened = size
            await adjustments(agent, view, changes, 0.5)
            await asyncio.sleep(idle)
            readings[size] = rss_mb(server.process.pid)
            print(f"{size:>3} open views: RSS {readings[size]:.1f} MB")
    mean_x, mean_y = statistics.mean(SIZES), statistics.mean(readings.values())
    return sum((x - mean_x) * (readings[x] - mean_y) for x in SIZES) / sum((x - mean_x) ** 2 for x in SIZES)


def memory(
    start: Callable[[str], contextlib.AbstractContextManager[RunningServer]], changes: int, idle: float, runs: int = 3
) -> bool:
    """`start(name)`: a new inventory server for each run."""
    print(f"\n== memory: RSS after {changes} changes at 2/s and {idle:.0f} s idle, per number of open views, each with "
          f"a Chromium tab; the median of {runs} runs")  # fmt: skip
    slopes: list[float] = []
    for run in range(runs):
        with start(f"memory-{run}") as server:
            slopes.append(asyncio.run(_slope(server, changes, idle)))
        print(f"run {run + 1}: {slopes[-1]:.2f} MB per open view")
    median = statistics.median(slopes)
    print(f"memory per open view: {median:.2f} MB, the median of {', '.join(f'{s:.2f}' for s in slopes)} "
          f"(target ≤ {TARGET_MB} MB)")  # fmt: skip
    return median <= TARGET_MB
