"""The live view tunnelled through the host's MCP connection where the host lets the frame reach no server (Claude
Desktop with a local server): a harness with Claude's policy for an `http://` server, every browser request to the
server aborted, the host carrying the view's own tool calls to the server through the official MCP client.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, BrowserContext, Frame, FrameLocator, Locator, Page, Route, expect

from tests.support.claude_host import ClaudeHost, serve_claude_host
from tests.support.embed import APPS_CLIENT, Hosted, low_stock_sku, serve_hosted
from tests.views.inventory.support import call, structured

TITLE = "The live inventory view"
TIMINGS = ("--reconnect-grace", "2", "--wait-for-live", "5", "--call-timeout", "3")

Served = Hosted[ClaudeHost]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_hosted(tmp_path_factory, TIMINGS, serve_claude_host) as served:
        yield served


@dataclass
class Host:
    """The harness page; its view's tool calls go to the server through `carrier` (the host's MCP client)."""

    page: Page
    reached: list[str] = field(default_factory=list)  # browser requests to the server (each aborted)
    carrier: list[Client] = field(default_factory=list)


@pytest_asyncio.fixture(loop_scope="session")
async def host(browser: Browser, served: Served) -> AsyncIterator[Host]:
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        yield await open_host(context, served)
    finally:
        await context.close()


async def open_host(context: BrowserContext, served: Served) -> Host:
    page = await context.new_page()
    harness = Host(page)

    async def cut(route: Route) -> None:
        harness.reached.append(route.request.url)
        await route.abort()

    await context.route(f"{served.server.base_url}/**", cut)  # nothing of the browser's reaches the server

    async def carry(_: Any, params: dict[str, Any]) -> dict[str, Any]:
        result = await harness.carrier[0].call_tool(params["name"], params.get("arguments") or {})
        return result.model_dump(mode="json", by_alias=True, exclude_none=True)

    await page.expose_binding("harnessCallTool", carry)
    await page.goto(served.host.url)
    return harness


async def show(host: Host, served: Served, agent: Client, calls: str = "forward", **shown: Any) -> dict[str, Any]:
    """Open the view as Claude's model would and render it under Claude's policy for an http:// server (its
    domains dropped); the host carries the view's own calls through `agent`'s connection as `calls` says."""
    host.carrier[:] = [agent]
    tool = next(tool for tool in (await agent.list_tools()).tools if tool.name == "inventory")
    assert tool.meta is not None
    resource = (await agent.read_resource(tool.meta["ui"]["resourceUri"])).contents[0]
    result = await call(agent, "inventory", warehouse_code="BER")
    details = {
        "html": getattr(resource, "text", ""),
        "csp": (resource.meta or {})["ui"]["csp"],
        "input": {},
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        "sandboxOrigin": served.host.sandbox_origin,
        "keepHttp": False,
        "opaque": False,
        "theme": "light",
        "honourFrames": False,
        "calls": calls,
        **shown,
    }
    await host.page.evaluate("shown => window.harness.show(shown)", details)
    return {**structured(result), "meta": result.meta}


def shell_of(host: Host, index: int = 0) -> FrameLocator:
    return host.page.frame_locator(f"iframe[data-index='{index}']").frame_locator("iframe")


def view_in(host: Host, index: int = 0) -> FrameLocator:
    return shell_of(host, index).frame_locator(f"iframe[title='{TITLE}']")


def stock_row(view: FrameLocator, sku: str) -> Locator:
    return view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku)


def on_hand(view: FrameLocator, sku: str) -> Locator:
    return stock_row(view, sku).locator("td").nth(3)


async def transport(host: Host) -> str | None:
    """How the shell says the view runs (`window.__webappTransport`)."""
    for frame in host.page.frames:
        if not frame.is_detached() and (value := await frame.evaluate("window.__webappTransport || null")):
            return str(value)
    return None


def saved_data(served: Served, view: str) -> dict[str, Any]:
    with sqlite3.connect(served.db) as conn:
        (data,) = conn.execute("SELECT data FROM webapp_views WHERE handle = ?", (view,)).fetchone()
    return json.loads(data)


async def wait_saved(served: Served, view: str, key: str, value: Any) -> None:
    async with asyncio.timeout(5):
        while saved_data(served, view).get(key) != value:
            await asyncio.sleep(0.1)


async def test_a_host_that_lets_the_frame_reach_nothing_gets_the_view_tunnelled_through_its_mcp_connection(
    host: Host, served: Served
) -> None:
    sku = low_stock_sku(served.db, "BER")
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, served, agent)
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=10_000)
        assert await transport(host) == "tunnel"
        before = int(await on_hand(view, sku).inner_text())
        await call(agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=5, reason="Delivery")
        await expect(on_hand(view, sku)).to_have_text(str(before + 5), timeout=3000)  # the agent's change, live

        await stock_row(view, sku).locator("td").first.click()  # a person's change, made inside the tunnelled view
        await expect(view.get_by_test_id("item-panel")).to_contain_text(sku)
        await view.get_by_test_id("adjust-delta").fill("-2")
        await view.get_by_test_id("adjust-reason").fill("Counted in the tunnel")
        await view.get_by_test_id("adjust-apply").click()
        await expect(on_hand(view, sku)).to_have_text(str(before + 3), timeout=3000)
        with sqlite3.connect(served.db) as conn:
            actor, reason = conn.execute(
                "SELECT actor, reason FROM inventory_movements WHERE sku = ? ORDER BY id DESC LIMIT 1", (sku,)
            ).fetchone()
        assert (actor, reason) == ("person", "Counted in the tunnel")

        await view.get_by_test_id("filter-search").fill(sku)  # the rows filter, the state holds it
        await expect(view.get_by_text("1 item shown")).to_be_visible(timeout=3000)
        await wait_saved(served, opened["view"], "search", sku)

        await (await view_frame(host)).evaluate(
            "location.reload()"
        )  # a reload inside the view comes back over the tunnel
        await expect(view.get_by_test_id("filter-search")).to_have_value(sku, timeout=10_000)
        await call(agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=1, reason="After reload")
        await expect(on_hand(view, sku)).to_have_text(str(before + 4), timeout=3000)
    assert host.reached == []  # every byte went through the host's MCP connection


async def view_frame(host: Host) -> Frame:
    for frame in host.page.frames:
        framed = not frame.is_detached() and frame.parent_frame is not None
        if framed and await (await frame.frame_element()).get_attribute("title") == TITLE:
            return frame
    raise AssertionError("no tunnelled view in the harness")
