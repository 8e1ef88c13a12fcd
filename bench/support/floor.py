"""The floor's breakdown for `bench.bridge`: timestamps on both sides of one confirmed counter action.

The client stamps the request and the response (`time.time()`), the tab stamps the update message's arrival and its
answer (`performance.timeOrigin + performance.now()`, the same clock), and the server's call log gives the tool
call's start and end (its record time minus and at its duration). One machine, one clock: the differences are the
segments of the round trip, each printed as a p50 over the calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client
from playwright.async_api import Page

__all__ = ["floor_breakdown"]

# In the tab: when each update message that asks for a confirmation arrives, and when the tab sends its answer (the
# confirm element's event).
_STAMP = """() => {
  const now = () => performance.timeOrigin + performance.now();
  window.floorStamps = { received: [], answered: [] };
  const confirms = (message) => Object.values(message).some((element) => element?.update_method === "confirm");
  window.socket.on("update", (message) => confirms(message) && window.floorStamps.received.push(now()));
  const emit = window.socket.emit.bind(window.socket);
  window.socket.emit = (name, ...args) => {
    if (name === "event") window.floorStamps.answered.push(now());
    return emit(name, ...args);
  };
}"""
SEGMENTS = (
    ("request in (HTTP, MCP, routing)", "sent", "started"),
    ("handler, outbox, socket to the tab", "started", "received"),
    ("tab applies the change, answers", "received", "answered"),
    ("answer in, result built", "answered", "ended"),
    ("response out (MCP, HTTP)", "ended", "returned"),
)


def _p50(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _server_calls(db: Path, tool: str, count: int) -> list[tuple[float, float]]:
    """The last `count` calls of `tool` in the call log: (start, end) in epoch seconds."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        rows = connection.execute(
            "SELECT time, duration_ms FROM webapp_calls WHERE tool = ? ORDER BY seq DESC LIMIT ?", (tool, count)
        ).fetchall()
    return [(float(end) - float(duration) / 1000, float(end)) for end, duration in reversed(rows)]


async def floor_breakdown(
    client: Client, page: Page, db: Path, calls: int, tool: str, arguments: Callable[[int], dict[str, Any]]
) -> dict[str, float]:
    """`calls` confirmed calls of `tool` (the i-th with `arguments(i)`) on a view shown in `page`; prints the p50 of
    each segment (ms) and returns them."""
    await page.evaluate(_STAMP)
    stamps: dict[str, list[float]] = {"sent": [], "returned": []}
    for number in range(calls):
        stamps["sent"].append(time.time() * 1000)
        result = await client.call_tool(tool, arguments(number))
        stamps["returned"].append(time.time() * 1000)
        if result.is_error:
            raise RuntimeError(f"a benchmark call failed: {result}")
    tab = await page.evaluate("window.floorStamps")
    stamps["received"], stamps["answered"] = tab["received"], tab["answered"]
    async with asyncio.timeout(10):  # the call log is written as the calls end; the last rows may trail
        while len(server := _server_calls(db, tool, calls)) < calls:
            await asyncio.sleep(0.05)
    stamps["started"] = [start * 1000 for start, _ in server]
    stamps["ended"] = [end * 1000 for _, end in server]
    if not all(len(values) == calls for values in stamps.values()):
        raise RuntimeError(f"stamps do not pair up: { {name: len(values) for name, values in stamps.items()} }")
    total = _p50([back - out for out, back in zip(stamps["sent"], stamps["returned"], strict=True)])
    print(f"\n{calls} confirmed {tool} calls, p50 of each segment (ms)")
    figures: dict[str, float] = {}
    for name, start, end in SEGMENTS:
        figures[name] = _p50([b - a for a, b in zip(stamps[start], stamps[end], strict=True)])
        print(f"  {name:<38} {figures[name]:7.2f}")
    print(f"  {'whole call':<38} {total:7.2f}  (the segments' p50s add up to {sum(figures.values()):.2f})")
    return figures
