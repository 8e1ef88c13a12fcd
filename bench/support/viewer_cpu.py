"""The viewer's server CPU per recorded call: the same calls with and without a viewer tab that shows each one.

A call of the test app's `report` tool (two charts, a table, JSON, Mermaid, code, rules, suggestions) is made over
one MCP session; with the tab open, the tab clicks the call's new row and waits until its result is drawn. The
server's user plus system CPU (/proc/PID/stat) over the calls without the tab is subtracted from that with it, so the
figure is what the viewer adds per call: its live-list row and the detail of the call.
"""

from __future__ import annotations

from playwright.async_api import Browser, expect

from bench.support.fanout import cpu_seconds
from tests.support.e2e import RunningServer, mcp_client

__all__ = ["REFERENCE_MS", "server_cpu_per_call"]

REFERENCE_MS = 19.2
"""What the viewer added per call while it built NiceGUI elements per block on the server (200 calls, 2026-12-03:
18.9 and 19.6 ms in two rounds, beside 2.7 and 3.7 ms per call without a tab)."""

_SHOW_NEXT = """async (known) => {
    const within = (ms) => new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), ms));
    const until = (check) => Promise.race([within(10000), new Promise((resolve) => {
        const poll = () => { const value = check(); value ? resolve(value) : requestAnimationFrame(poll); };
        poll();
    })]);
    const row = await until(() => {
        const first = document.querySelector('.wv-call');
        return first && Number(first.dataset.seq) > known ? first : null;
    });
    const seq = Number(row.dataset.seq);
    row.click();
    await until(() => (document.querySelector('.wv-detail-header') || {}).textContent?.includes(`#${seq}`)
        && document.querySelectorAll('.wv-chart canvas').length >= 2
        && document.querySelector('.wv-mermaid svg') && document.querySelector('.wv-markdown td'));
    return seq;
}"""


async def _calls(server: RunningServer, count: int) -> None:
    async with mcp_client(server, mode="legacy") as client:
        for _ in range(count):
            await client.call_tool("report", {})


async def server_cpu_per_call(server: RunningServer, browser: Browser, calls: int) -> tuple[float, float]:
    """(ms of server CPU per call with a viewer tab showing each call, ms per call without a tab); their difference is
    what the viewer adds."""
    pid = server.process.pid
    await _calls(server, 5)  # warm-up: imports, the first session, the database
    started = cpu_seconds(pid)
    await _calls(server, calls)
    alone = (cpu_seconds(pid) - started) * 1000 / calls
    page = await browser.new_page(viewport={"width": 1440, "height": 1000})
    await page.goto(f"{server.base_url}/viewer?tool=report")
    await expect(page.locator(".wv-call").first).to_be_attached(timeout=10_000)
    known = int(await page.locator(".wv-call").first.get_attribute("data-seq") or 0)
    async with mcp_client(server, mode="legacy") as client:
        await client.call_tool("report", {})
        known = int(await page.evaluate(_SHOW_NEXT, known))
        started = cpu_seconds(pid)
        for _ in range(calls):
            await client.call_tool("report", {})
            known = int(await page.evaluate(_SHOW_NEXT, known))
        watched = (cpu_seconds(pid) - started) * 1000 / calls
    await page.close()
    return watched, alone
