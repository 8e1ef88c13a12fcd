"""How fast the call viewer shows results: a big response rendered in Chromium, a new call in an open viewer, and the
viewer's server CPU per recorded call.

The big response has a 1,000-row Markdown table and 5 ECharts blocks (the test app's `big` tool); the renderer shows a
table's first 200 rows at once and the rest on demand. From the text: `parseBlocks` + `renderBlocks` of the result
in the viewer page, to the frame in which every chart has its canvas and the first rows are in the DOM (then the
click on "show more" until all 1,000 rows are); and 20 charts, with the longest task meanwhile. End to end: from
the click on the call's row to that frame (warm: the viewer page is already open); a cold figure adds the page load.
A new call's latency is timed from the start of an MCP call to the moment its row appears in an open viewer (a
MutationObserver reports it). Server CPU: see `bench/support/viewer_cpu.py`. Run: `.venv/bin/python -m bench.viewer
[--runs 7] [--calls 40] [--cpu-calls 200]`; the exit code says whether every target was met.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright, expect

from bench.support.viewer_cpu import REFERENCE_MS, server_cpu_per_call
from tests.support.e2e import RunningServer, mcp_client, run_server

APP = "tests.support.viewer_app:build"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
TARGET_RENDER_MS = 1000.0
TARGET_TEXT_MS = 150.0
TARGET_LIVE_MS = 200.0
TARGET_TASK_MS = 200.0  # the longest the page may stay busy while drawing 20 charts ("good" responsiveness, INP)
ROWS, CHARTS = 1000, 5
SHOWN = 200  # the rows of a table shown at once (TABLE_ROWS in static/render/markdown.js)

_RENDERED = f"""(marker) => document.querySelectorAll('.wv-chart canvas').length >= {CHARTS}
    && document.querySelectorAll('.wv-markdown tr').length === {SHOWN + 1}
    && [...document.querySelectorAll('.wv-markdown tr:last-child td')].some((cell) => cell.textContent === marker)"""
_CLICK_AND_WAIT = f"""async ([seq, marker]) => {{
    const rendered = {_RENDERED};
    const started = performance.now();
    document.querySelector(`.wv-call[data-seq="${{seq}}"]`).click();
    await new Promise((resolve) => {{
        const check = () => (rendered(marker) ? resolve() : requestAnimationFrame(check));
        requestAnimationFrame(check);
    }});
    await new Promise(requestAnimationFrame);  // the frame that paints it
    return performance.now() - started;
}}"""
_WATCH_ROWS = """() => {
    const list = document.querySelector('.wv-list');
    new MutationObserver((changes) => {
        for (const change of changes) for (const node of change.addedNodes)
            if (node.dataset && node.dataset.seq) window.rowSeen(Number(node.dataset.seq));
    }).observe(list, { childList: true });
}"""


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


_FROM_TEXT = f"""async ([bundle, texts]) => {{
    const viewer = await import(bundle);
    const box = document.createElement('div');
    document.querySelector('.wv-detail-pane').prepend(box);
    const started = performance.now();
    await viewer.renderBlocks(box, viewer.parseBlocks(texts), {{}});
    await new Promise(requestAnimationFrame);  // the frame that paints it
    const drawn = performance.now() - started;
    if (box.querySelectorAll('.wv-chart canvas').length < {CHARTS} || box.querySelectorAll('tr').length !== {SHOWN + 1})
        throw new Error('the result was not drawn');
    const more = performance.now();
    for (let button; (button = box.querySelector('.wv-more')); ) button.click();
    await new Promise(requestAnimationFrame);
    const all = box.querySelectorAll('tr').length === {ROWS + 1} ? performance.now() - more : NaN;
    viewer.clearBlocks(box);
    box.remove();
    return [drawn, all];
}}"""


_TWENTY_CHARTS = """async ([bundle, texts]) => {
    const viewer = await import(bundle);
    const box = document.createElement('div');
    document.querySelector('.wv-detail-pane').prepend(box);
    const tasks = [];
    const observer = new PerformanceObserver((list) => tasks.push(...list.getEntries().map((e) => e.duration)));
    observer.observe({ type: 'longtask' });
    const started = performance.now();
    await viewer.renderBlocks(box, viewer.parseBlocks(texts), {});
    await new Promise(requestAnimationFrame);
    const total = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 0));
    observer.disconnect();
    const drawn = box.querySelectorAll('.wv-chart canvas').length;
    viewer.clearBlocks(box);
    box.remove();
    return [total, Math.max(0, ...tasks), drawn];
}"""


def _twenty_charts() -> list[str]:
    option = json.dumps(
        {
            "xAxis": {"type": "category", "data": ["a", "b", "c"]},
            "yAxis": {},
            "series": [{"type": "bar", "data": [3, 1, 2]}],
        }
    )
    chart = f'<ui_passthrough type="echarts" title="Chart" width="half">\n```echarts\n{option}\n```\n</ui_passthrough>'
    return ["{}", *([chart] * 20)]


def _marker(seed: int) -> str:
    """The text of a cell in the last table row shown at once of the `big` response with `seed`."""
    return f"Item {seed}-{SHOWN - 1}"


async def from_text(server: RunningServer, page: Page, runs: int) -> tuple[list[float], list[float]]:
    """(ms to parse and draw the big result from its texts, ms to show the rest of its table) in the viewer page."""
    await page.goto(f"{server.base_url}/viewer?tool=echo")
    await expect(page.locator(".wv-detail-pane")).to_be_attached(timeout=10_000)
    drawn: list[float] = []
    rest: list[float] = []
    async with mcp_client(server) as client:
        for run in range(runs + 2):
            result = await client.call_tool("big", {"seed": 1000 + run})
            texts = [getattr(block, "text", "") for block in result.content]
            first, more = await page.evaluate(_FROM_TEXT, ["/static/dist/viewer.js", texts])
            if run >= 2:  # the first runs load the bundle and warm its code up
                drawn.append(float(first))
                rest.append(float(more))
    return drawn, rest


async def twenty_charts(page: Page, runs: int) -> tuple[list[float], list[float]]:
    """(ms until 20 charts are drawn, ms of the longest task meanwhile) in the viewer page, per run."""
    totals: list[float] = []
    longest: list[float] = []
    for _ in range(runs):
        total, task, drawn = await page.evaluate(_TWENTY_CHARTS, ["/static/dist/viewer.js", _twenty_charts()])
        if drawn != 20:
            raise RuntimeError(f"{drawn} of 20 charts were drawn")
        totals.append(float(total))
        longest.append(float(task))
    return totals, longest


async def render_times(server: RunningServer, page: Page, runs: int) -> tuple[list[float], list[float]]:
    """Each run renders two responses never rendered before (distinct texts: no cache helps)."""
    cold: list[float] = []
    warm: list[float] = []
    for run in range(runs):
        async with mcp_client(server) as client:
            await client.call_tool("echo", {"text": "small"})
            await client.call_tool("big", {"seed": 2 * run})
            await client.call_tool("big", {"seed": 2 * run + 1})
        await page.goto(f"{server.base_url}/viewer?tool=big")
        rows = page.locator(".wv-call")
        await expect(rows).to_have_count(2 * run + 2, timeout=10_000)
        newest, second = [int(await rows.nth(i).get_attribute("data-seq") or 0) for i in (0, 1)]
        started = time.perf_counter()
        await page.goto(f"{server.base_url}/viewer?tool=big&call={second}")
        await page.wait_for_function(_RENDERED, arg=_marker(2 * run), polling="raf", timeout=30_000)
        cold.append((time.perf_counter() - started) * 1000)
        warm.append(float(await page.evaluate(_CLICK_AND_WAIT, [newest, _marker(2 * run + 1)])))
    return cold, warm


async def live_latencies(server: RunningServer, page: Page, calls: int) -> tuple[list[float], list[float]]:
    seen: dict[int, float] = {}
    arrived = asyncio.Event()

    def row_seen(_source: Any, seq: int) -> None:
        seen[seq] = time.perf_counter()
        arrived.set()

    await page.expose_binding("rowSeen", row_seen)
    await page.goto(f"{server.base_url}/viewer?tool=echo")
    await expect(page.locator(".wv-list")).to_be_attached(timeout=10_000)
    await page.evaluate(_WATCH_ROWS)
    from_start: list[float] = []
    from_return: list[float] = []
    async with mcp_client(server, mode="legacy") as client:
        await client.call_tool("echo", {"text": "warm-up"})
        for index in range(calls):
            known = set(seen)
            arrived.clear()
            started = time.perf_counter()
            await client.call_tool("echo", {"text": f"call {index}"})
            returned = time.perf_counter()
            async with asyncio.timeout(10):
                while not set(seen) - known:
                    await arrived.wait()
                    arrived.clear()
            appeared = seen[max(set(seen) - known)]
            from_start.append((appeared - started) * 1000)
            from_return.append(max(0.0, (appeared - returned) * 1000))
    return from_start, from_return


def line(name: str, samples: list[float]) -> str:
    return (
        f"  {name:<44} p50 {statistics.median(samples):7.1f} ms   p90 {percentile(samples, 0.9):7.1f} ms   "
        f"max {max(samples):7.1f} ms"
    )


async def main(runs: int, calls: int, cpu_calls: int) -> int:
    with tempfile.TemporaryDirectory() as folder, run_server(app=APP, db=Path(folder) / "bench.db") as server:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1440, "height": 1000})
            cold, warm = await render_times(server, page, runs)
            drawn, rest = await from_text(server, page, runs)
            charts, longest = await twenty_charts(page, runs)
            await page.close()
            page = await browser.new_page(viewport={"width": 1440, "height": 1000})
            from_start, from_return = await live_latencies(server, page, calls)
            await page.close()
            with tempfile.TemporaryDirectory() as other, run_server(app=APP, db=Path(other) / "cpu.db") as fresh:
                watched, alone = await server_cpu_per_call(fresh, browser, cpu_calls)
            await browser.close()
    print(f"viewer: a response with a {ROWS:,}-row Markdown table and {CHARTS} charts ({runs} runs)")
    print(line("parsed and drawn from the text", drawn))
    print(line(f"the other {ROWS - SHOWN} rows shown on demand", rest))
    print(line("rendered after a click on its row (warm)", warm))
    print(line("rendered after navigating to it (cold)", cold))
    print(f"viewer: 20 charts in one result ({runs} runs)")
    print(line("all drawn", charts))
    print(line("the longest task meanwhile (busy page)", longest))
    print(f"viewer: a new call appearing in an open viewer ({calls} calls, legacy session)")
    print(line("from the start of the MCP call", from_start))
    print(line("from the MCP call's return", from_return))
    added = watched - alone
    print(f"viewer: server CPU per recorded call ({cpu_calls} report calls, /proc)")
    print(f"  with a viewer tab showing each call {watched:6.1f} ms, without a tab {alone:6.1f} ms")
    print(f"  added by the viewer {added:6.1f} ms (server-built blocks before: {REFERENCE_MS:.1f} ms)")
    text_ok = statistics.median(drawn) <= TARGET_TEXT_MS
    render_ok = statistics.median(warm) < TARGET_RENDER_MS
    live_ok = statistics.median(from_start) < TARGET_LIVE_MS
    cpu_ok = added <= REFERENCE_MS / 2
    task_ok = statistics.median(longest) <= TARGET_TASK_MS
    print(
        f"targets: from the text <= {TARGET_TEXT_MS:.0f} ms: {'met' if text_ok else 'MISSED'}; "
        f"render < {TARGET_RENDER_MS:.0f} ms: {'met' if render_ok else 'MISSED'}; "
        f"new call < {TARGET_LIVE_MS:.0f} ms: {'met' if live_ok else 'MISSED'}; "
        f"server CPU <= {REFERENCE_MS / 2:.1f} ms: {'met' if cpu_ok else 'MISSED'}; "
        f"longest task with 20 charts <= {TARGET_TASK_MS:.0f} ms: {'met' if task_ok else 'MISSED'}"
    )
    return 0 if text_ok and render_ok and live_ok and cpu_ok and task_ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Time the call viewer: a big response, and new calls.")
    parser.add_argument("--runs", type=int, default=7, help="renders of the big response")
    parser.add_argument("--calls", type=int, default=40, help="calls timed until they appear")
    parser.add_argument("--cpu-calls", type=int, default=200, help="calls of the server CPU figure")
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.runs, arguments.calls, arguments.cpu_calls)))
