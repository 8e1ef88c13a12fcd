"""Two agent sessions and a person change stock at the same time: every change lands exactly once, none below zero."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import mcp_types
import pytest
from mcp import Client
from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer
from tests.views.inventory.support import OpenView, held_client, on_hand_cell, snapshot, stock_row, texts

pytestmark = pytest.mark.asyncio(loop_scope="session")  # the shared agent and tab live in the session loop

CALLS_PER_ITEM = 50
PERSON_CHANGES = 3
PERSON_DELTA = 7


def _movements_since(db: Path, last_id: int, sku: str) -> dict[str, int]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT actor, COUNT(*) FROM inventory_movements WHERE id > ? AND sku = ? GROUP BY actor", (last_id, sku)
        ).fetchall()
    return dict(rows)


def _last_movement_id(db: Path) -> int:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return conn.execute("SELECT MAX(id) FROM inventory_movements").fetchone()[0]


def _lowest_available(db: Path) -> int:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return conn.execute("SELECT MIN(on_hand - reserved) FROM inventory_stock").fetchone()[0]


async def _person_adds_stock(tab: Page, sku: str) -> None:
    await stock_row(tab, sku).locator("td").first.click()
    await expect(tab.get_by_test_id("item-panel")).to_contain_text(sku)
    for n in range(PERSON_CHANGES):
        await tab.get_by_test_id("adjust-delta").fill(str(PERSON_DELTA))
        await tab.get_by_test_id("adjust-reason").fill(f"Found in aisle {n + 1}")
        await tab.get_by_test_id("adjust-apply").click()
        await expect(tab.get_by_test_id("adjust-reason")).to_have_value("")  # the form clears once it is applied


async def test_concurrent_changes_from_two_sessions_and_a_person_all_land_exactly_once(
    server: RunningServer, view: OpenView, agent: Client, tab: Page, db: Path
) -> None:
    before = snapshot(db)
    plenty = next(sku for (wh, sku), _ in sorted(before.stock.items()) if wh == "BER" and before.available(sku) >= 60)
    scarce = next(
        sku for (wh, sku), _ in sorted(before.stock.items()) if wh == "BER" and 5 <= before.available(sku) <= 30
    )
    last_id = _last_movement_id(db)
    deltas = [3 if n % 2 else -2 for n in range(CALLS_PER_ITEM)]

    async with held_client(server.mcp_url) as other:

        async def burst(client: Client, share: int) -> list[mcp_types.CallToolResult]:
            calls = []
            for n in range(share, CALLS_PER_ITEM, 2):
                common = {"_view": view.handle, "reason": f"Concurrent change {n}"}
                calls.append(client.call_tool("inventory_adjust_stock", {"sku": plenty, "delta": deltas[n], **common}))
                calls.append(client.call_tool("inventory_adjust_stock", {"sku": scarce, "delta": -1, **common}))
            return list(await asyncio.gather(*calls))

        async with asyncio.timeout(60):
            first, second, _ = await asyncio.gather(burst(agent, 0), burst(other, 1), _person_adds_stock(tab, plenty))

    results = first + second
    assert len(results) == 2 * CALLS_PER_ITEM
    refused = [r for r in results if r.is_error]
    assert all(texts(r)[0].startswith('<tool_error code="INSUFFICIENT_STOCK"') for r in refused)
    scarce_start = before.available(scarce)
    assert len(refused) == CALLS_PER_ITEM - scarce_start

    after = snapshot(db)
    person_total = PERSON_CHANGES * PERSON_DELTA
    assert after.on_hand(plenty) == before.on_hand(plenty) + sum(deltas) + person_total
    assert after.available(scarce) == 0
    assert _movements_since(db, last_id, plenty) == {"agent": CALLS_PER_ITEM, "person": PERSON_CHANGES}
    assert _movements_since(db, last_id, scarce) == {"agent": scarce_start}
    assert after.movements == before.movements + CALLS_PER_ITEM + PERSON_CHANGES + scarce_start
    assert _lowest_available(db) >= 0
    await expect(on_hand_cell(tab, plenty)).to_have_text(f"{after.on_hand(plenty):,}")
    await expect(on_hand_cell(tab, scarce)).to_have_text(f"{after.on_hand(scarce):,}")
