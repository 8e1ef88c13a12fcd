"""A watching tab receives what it can draw: a burst of changes arrives as a few updates with the newest figures and
every movement, the acting tab has its own change when its call returns, and `--view-coalesce 0` sends each change.

Each test opens its own tabs (own browser contexts); the tabs record the feed rows each update message brings.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncGenerator, Iterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import pytest
from mcp import Client
from playwright.async_api import Browser, Page, expect

from tests.support.e2e import RunningServer, run_server
from tests.support.ops import scrape
from tests.views.inventory.support import (
    INVENTORY_APP,
    call,
    data_of,
    held_client,
    on_hand_cell,
    open_view,
    snapshot,
    stock_row,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the browser lives in the session loop

SKU = "FST-1007"
WAIT = 10_000  # ms, for a tab to show a change
# Records, for each update message the tab receives, the reasons of the feed rows it prepends (newest first).
_RECORD = """() => {
  window.feedUpdates = [];
  window.socket.on("update", (message) => {
    for (const element of Object.values(message)) {
      const calls = element?.props?.calls;
      if (typeof calls !== "string") continue;
      for (const [, name, args] of JSON.parse(calls)) {
        if (name === "prepend") window.feedUpdates.push(args[0].map((row) => row.reason));
      }
    }
  });
}"""
_FEED = "(feed) => [...feed.querySelectorAll('[data-actor] [title]')].map((reason) => reason.title)"


@asynccontextmanager
async def _tabs(browser: Browser, server: RunningServer) -> AsyncGenerator[tuple[Client, Page, Page]]:
    """An agent with its view of BER in one tab, a person's view of BER in another; both record their updates."""
    contexts = [await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(2)]
    try:
        acting, watching = [await context.new_page() for context in contexts]
        async with held_client(server.mcp_url) as agent:
            await open_view(agent, acting, warehouse_code="BER")  # first: the person's view would be adopted
            await watching.goto(server.base_url + "/inventory")
            await expect(watching.get_by_test_id("warehouse-code")).to_have_text("BER")
            for page in (acting, watching):
                await page.evaluate(_RECORD)
            yield agent, acting, watching
    finally:
        for context in contexts:
            await context.close()


def _newest_reasons(db: Path, count: int) -> list[str]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT reason FROM inventory_movements ORDER BY id DESC LIMIT ?", (count,)).fetchall()
    return [reason for (reason,) in rows]


async def _updates(page: Page) -> list[list[str]]:
    return await page.evaluate("window.feedUpdates")


async def test_a_burst_reaches_a_watching_tab_as_few_updates_with_every_movement_and_the_acting_tab_at_once(
    server: RunningServer, browser: Browser, db: Path
) -> None:
    async with _tabs(browser, server) as (agent, acting, watching):
        before, metrics = snapshot(db).on_hand(SKU), await asyncio.to_thread(scrape, server.base_url + "/metrics")
        reasons = [f"Burst {number}" for number in range(12)]  # the feed's size: every row of the burst shows
        burst = [call(agent, "inventory_adjust_stock", sku=SKU, delta=1, reason=reason) for reason in reasons]
        for result in await asyncio.gather(*burst):
            data_of(result)
        await expect(on_hand_cell(watching, SKU)).to_have_text(f"{before + 12:,}", timeout=WAIT)
        committed = _newest_reasons(db, len(reasons))  # newest first, as the feed lists them
        assert sorted(committed) == sorted(reasons)
        await expect(watching.get_by_test_id("movement-feed").locator("[data-actor]").first).to_contain_text(
            committed[0]
        )
        assert await watching.get_by_test_id("movement-feed").evaluate(_FEED) == committed
        updates = await _updates(watching)
        assert [reason for update in reversed(updates) for reason in update] == committed  # each once, in order
        assert len(updates) < len(reasons), updates  # merged: fewer updates than changes
        after = await asyncio.to_thread(scrape, server.base_url + "/metrics")
        merged = after.get("webapp_app_events_coalesced_total") - metrics.get("webapp_app_events_coalesced_total")
        assert merged >= len(reasons) - len(updates)  # the watching view's, and any other view's of BER

        own = [f"Own change {number}" for number in range(3)]
        for reason in own:  # back to back: within one interval of the watching tab
            data_of(await call(agent, "inventory_adjust_stock", sku=SKU, delta=1, reason=reason))
            assert (await _updates(acting))[-1] == [reason]  # already there: its confirmation was the answer
        latest = watching.get_by_test_id("movement-feed").locator("[data-actor]").first
        await expect(latest).to_contain_text(own[-1], timeout=WAIT)
        assert [reason for update in (await _updates(watching))[len(updates) :] for reason in reversed(update)] == own


@pytest.fixture(scope="module")
def uncoalesced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    db = tmp_path_factory.mktemp("uncoalesced") / "inventory.db"
    with run_server("--view-coalesce", "0", app=INVENTORY_APP, db=db) as running:
        yield running


async def test_with_view_coalesce_0_a_watching_tab_gets_one_update_per_change(
    uncoalesced: RunningServer, browser: Browser
) -> None:
    """A person's changes (no MCP request holds the deliveries meanwhile), one right after the other: a coalescing
    server would merge the later ones into one update."""
    async with _tabs(browser, uncoalesced) as (_agent, acting, watching):
        await stock_row(acting, SKU).locator("td").first.click()
        await expect(acting.get_by_test_id("item-panel")).to_contain_text(SKU)
        reasons = [f"Uncoalesced {number}" for number in range(4)]
        for reason in reasons:
            await acting.get_by_test_id("adjust-delta").fill("1")
            await acting.get_by_test_id("adjust-reason").fill(reason)
            await acting.get_by_test_id("adjust-apply").click()
            await expect(acting.get_by_test_id("adjust-reason")).to_have_value("")  # the form clears once applied
        latest = watching.get_by_test_id("movement-feed").locator("[data-actor]").first
        await expect(latest).to_contain_text(reasons[-1], timeout=WAIT)
        assert await _updates(watching) == [[reason] for reason in reasons]
