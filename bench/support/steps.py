"""The steps run of `bench.inventory` (a report, no target): where a watching inventory view's update goes, timed
inside the server (`bench.support.view_steps`) while 100 light tabs watch one adjustment every 250 ms. What the
fan-out run's figure holds beyond the framework's floor is these steps."""

from __future__ import annotations

import json

from mcp import Client
from mcp.types import TextContent

from bench.support.burst import agent_in_light_tab
from bench.support.fanout import SPACING, adjustments
from bench.support.view_steps import LATE
from tests.support.e2e import RunningServer
from tests.support.light_tab import LightTabs

__all__ = ["view_steps"]

WATCHERS = 100
_MESSAGE = "the calls made into their message"


async def _timings(agent: Client) -> dict[str, tuple[int, int]]:
    """The server's step timings since the last ask: calls and nanoseconds per step."""
    result = await agent.call_tool("view_steps", {})
    text = next(block.text for block in result.content if isinstance(block, TextContent))
    return {step: (calls, nanoseconds) for step, (calls, nanoseconds) in json.loads(text).items()}


async def view_steps(server: RunningServer, changes: int) -> None:
    print(f"\n== view steps: {changes} changes every {SPACING * 1000:.0f} ms, {WATCHERS} light tabs watching, the "
          "view's steps timed inside the server (bench.support.view_steps)")  # fmt: skip
    async with agent_in_light_tab(server) as (agent, view):
        watchers = LightTabs(server.base_url + "/inventory")
        try:
            await watchers.open(WATCHERS)
            await _timings(agent)  # the opening's and the page builds' steps left out
            await adjustments(agent, view, changes, SPACING)
            timings = await _timings(agent)
        finally:
            watchers.close()
    updates = timings[next(iter(timings))][0]  # the views' updates: every step below is part of one
    print(f"{'step':<42} {'µs per update':>14} {'calls':>7}")
    for step, (calls, nanoseconds) in timings.items():
        print(f"{step:<42} {nanoseconds / 1000 / max(updates, 1):>14.1f} {calls:>7}")
    applying, late, message = (
        timings[step][1] / 1000 / max(updates, 1) for step in (next(iter(timings)), LATE, _MESSAGE)
    )
    print(f"a view's own work per delivered update: {applying:.1f} µs applying the change + {late:.1f} µs late chart "
          f"draws + {message:.1f} µs making its calls into messages = {applying + late + message:.1f} µs")  # fmt: skip
