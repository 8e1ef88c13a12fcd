"""The worker holding a view is killed in the middle of a call: the caller gets a clear error at once (not at the
call timeout), the tab comes back on the surviving worker, and a retry with the same `_call_id` books the change
once."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sqlite3
import time
from pathlib import Path

from playwright.async_api import Page, expect

from tests.support.cluster import eventually, on_worker, start_worker
from tests.support.redis import RedisServer
from tests.support.views import connect
from tests.views.inventory.support import INVENTORY_APP, data_of, on_hand_cell, snapshot, structured, texts

SETTINGS = ("--wait-for-live", "10", "--reconnect-grace", "1", "--call-timeout", "20")
SKU = "FST-1004"
# the tab keeps receiving the changes but never confirms them (neither the confirm element's event nor a JavaScript
# round trip's answer leaves it): the call stays in flight
_NO_CONFIRMATION = """() => {
  const emit = window.socket.emit.bind(window.socket);
  const silent = new Set(["javascript_response", "event"]);
  window.socket.emit = (name, ...args) => (silent.has(name) ? window.socket : emit(name, ...args));
}"""


async def test_the_owner_killed_mid_call_fails_it_at_once_and_a_retry_elsewhere_books_once(
    tmp_path: Path, page: Page, redis_db: str, redis_server: RedisServer
) -> None:
    db = tmp_path / "inventory.db"
    with contextlib.ExitStack() as survivor, contextlib.ExitStack() as victim:
        one, two = await asyncio.gather(
            start_worker(survivor, "w1", redis_db, *SETTINGS, db=db, app=INVENTORY_APP),
            start_worker(victim, "w2", redis_db, *SETTINGS, db=db, app=INVENTORY_APP),
        )
        async with connect(one) as agent:
            data = structured(await agent.call_tool("inventory", {"warehouse_code": "BER"}))
            await page.goto(on_worker(str(data["url"]), two))
            await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
            before = snapshot(db).on_hand(SKU)
            await page.evaluate(_NO_CONFIRMATION)
            change = {"sku": SKU, "delta": 5, "reason": "PO-77", "_call_id": "po-77", "_view": data["view"]}
            started = time.monotonic()
            in_flight = asyncio.create_task(agent.call_tool("inventory_adjust_stock", change))
            await expect(on_hand_cell(page, SKU)).to_have_text(f"{before + 5:,}")  # booked on w2, not confirmed
            two.process.send_signal(signal.SIGKILL)
            failed = await in_flight
            # gone (VIEW_UNAVAILABLE), or killed before it acknowledged the call (BRIDGE_UNAVAILABLE): both retryable
            assert failed.is_error and re.search(r'code="(VIEW|BRIDGE)_UNAVAILABLE"', texts(failed)[0]), texts(failed)
            assert "Retry in a few seconds with the same _call_id." in texts(failed)[0]
            assert time.monotonic() - started < 20  # the call timeout: the kill was noticed long before

            def released() -> bool:  # held by nobody now: its tab may attach anywhere
                with contextlib.closing(sqlite3.connect(db)) as conn:
                    query = "SELECT state, worker FROM webapp_views WHERE handle = ?"
                    return conn.execute(query, (data["view"],)).fetchone() == ("disconnected", None)

            await eventually(released, 5, "the view's release")
            await page.goto(on_worker(str(data["url"]), one))  # as the load balancer sends the reconnect elsewhere
            await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
            retried = data_of(await agent.call_tool("inventory_adjust_stock", change))
            assert retried["on_hand"] == before + 5 == snapshot(db).on_hand(SKU)
            await expect(on_hand_cell(page, SKU)).to_have_text(f"{before + 5:,}")
