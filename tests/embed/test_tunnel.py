"""The live view tunnelled through the host's MCP connection where the host lets the frame reach no server (Claude
Desktop with a local server): a harness with Claude's policy for an `http://` server, every browser request to the
server aborted, the host carrying the view's own tool calls to the server through the official MCP client.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, expect

from tests.support.claude_host import ClaudeHost, serve_claude_host
from tests.support.e2e import stdio_parameters
from tests.support.embed import APPS_CLIENT, Hosted, low_stock_sku, serve_hosted
from tests.support.tunnel_host import (
    FONTS,
    IMPORT_EVERY_MODULE,
    Host,
    on_hand,
    open_host,
    shell_of,
    show,
    stock_row,
    transport,
    view_frame,
    view_in,
)
from tests.views.inventory.support import INVENTORY_APP, call

TIMINGS = ("--wait-for-live", "5", "--call-timeout", "3")  # the default grace: engine.io pings every 12 s

Served = Hosted[ClaudeHost]


@pytest_asyncio.fixture(loop_scope="session")
async def host(browser: Browser, served: Served) -> AsyncIterator[Host]:
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        yield await open_host(context, served.host)
    finally:
        await context.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_hosted(tmp_path_factory, TIMINGS, serve_claude_host) as served:
        yield served


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
        opened = await show(host, agent)
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=10_000)
        assert await transport(host) == "tunnel"
        document = await view_frame(host)  # its assets all inline: the fonts it uses, its stylesheet, every module
        assert await document.evaluate(FONTS) == {"Roboto": ["loaded"], "Material Icons": ["loaded"]}
        assert await document.evaluate("document.querySelector('style[data-webapp-styles]').textContent.length > 0")
        failed = await document.evaluate(IMPORT_EVERY_MODULE)  # also the components this view does not use
        assert all('specifier "widget"' in error for error in failed), failed  # anywidget's, mapped at its run time
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
    assert host.calls.reached == []  # every byte went through the host's MCP connection
    tunnel = next(
        carried.structured["tunnel"] for carried in host.calls.carried if carried.name == "webapp_tunnel_open"
    )
    assert tunnel not in served.server.output and tunnel[:12] not in served.server.output  # never logged


async def test_a_client_that_declared_no_mcp_apps_support_still_gets_its_view_tunnelled(
    host: Host, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy") as agent:  # (claude.ai was seen rendering so)
        opened = await show(host, agent)
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=10_000)
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="HAM")
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("HAM", timeout=3000)
    assert host.calls.reached == [] and await transport(host) == "tunnel"


async def test_over_stdio_the_hosts_own_connection_carries_the_view(host: Host, tmp_path: Path) -> None:
    parameters = stdio_parameters(*TIMINGS, db=tmp_path / "inventory.db", app=INVENTORY_APP)
    async with Client(parameters, extensions=[APPS_CLIENT]) as agent:  # Claude Desktop's local server entry
        opened = await show(host, agent)
        assert opened["url"].startswith("http://127.0.0.1:")
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=15_000)
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="MUC")
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("MUC", timeout=3000)
    assert host.calls.reached == []


async def test_an_opaque_origin_sandbox_runs_the_tunnelled_view_too(host: Host, served: Served) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, agent, opaque=True)
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=10_000)
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="HAM")
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("HAM", timeout=3000)
    assert host.calls.reached == []


async def test_a_host_that_runs_one_app_call_at_a_time_still_drives_the_view_polling_once_a_second(
    host: Host, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, agent, calls="serial")
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=30_000)
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="HAM")
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("HAM", timeout=10_000)
        polls = "window.harness.received.toolCalls.filter(c => c.args.method === 'GET' || c.args.poll).length"
        before = await host.page.evaluate(polls)
        await asyncio.sleep(3)
        during = await host.page.evaluate(polls) - before
    assert during <= 4, during  # polls at most once a second (a minute's 60)
    assert host.calls.reached == []


async def test_a_first_call_unanswered_for_five_seconds_shows_the_card_and_a_late_answer_replaces_it(
    host: Host, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        await show(host, agent, calls="late")  # an approval prompt the person answers after a while
        card = shell_of(host).get_by_test_id("webapp-open-card")
        await expect(card).to_be_visible(timeout=6000)
        await expect(card).to_contain_text("did not answer")
        assert await host.page.evaluate("window.harness.received.toolCalls.length") == 0  # nothing carried yet
        await host.page.evaluate("window.harness.release()")
        await expect(view_in(host).get_by_test_id("warehouse-code")).to_have_text("BER", timeout=10_000)
        await expect(card).to_be_hidden()
    assert host.calls.reached == []
