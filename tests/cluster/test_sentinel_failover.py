"""A Sentinel failover in the middle of a stream of bookings (`--redis-url redis+sentinel://…`): two inventory workers,
the agent on w1, the person's tab on w2, every booking with a `_call_id` retried as an agent would on a retryable
code. Nothing is lost, nothing doubled, nothing applied but never acknowledged, and the tab is back within 10 s."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Page, expect

from tests.cluster.conftest import Engines
from tests.support.cluster import eventually, on_worker, two_workers
from tests.support.views import FAST, connect
from tests.views.inventory.support import INVENTORY_APP, data_of, on_hand_cell, structured, texts

SETTINGS = (*FAST, "--call-timeout", "20")
RETRYABLE = {"BRIDGE_UNAVAILABLE", "VIEW_UNAVAILABLE", "VIEW_TIMEOUT", "STORE_UNAVAILABLE", "SERVER_STOPPING"}
SKU, FAILOVER_AFTER, AFTER = "FST-1002", 3, 3  # bookings before the failover, and after it has completed


def code(result: Any) -> str:
    return texts(result)[0].split('code="', 1)[1].split('"', 1)[0] if result.is_error else "OK"


def subscribers(port: int) -> int:
    """How many connections of the Redis on `port` hold sharded subscriptions (the workers' inboxes)."""
    done = subprocess.run(["redis-cli", "-p", str(port), "CLIENT", "LIST"], capture_output=True, text=True, check=True)
    return sum(1 for line in done.stdout.splitlines() if " ssub=" in line and " ssub=0 " not in line)


def booked(db: Path) -> dict[str, int]:
    """How many movements each booking's reason has in the database."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        query = "SELECT reason, count(*) FROM inventory_movements WHERE reason LIKE 'FO-%' GROUP BY reason"
        return {str(reason): int(count) for reason, count in conn.execute(query)}


async def book(agent: Any, view: str, number: int, codes: list[str]) -> dict[str, Any]:
    """One booking, retried with the same `_call_id` on a retryable code (pausing briefly, as an agent would)."""
    change = {"sku": SKU, "delta": 1, "reason": f"FO-{number}", "_call_id": f"fo-{number}", "_view": view}
    started = time.monotonic()
    while True:
        result = await agent.call_tool("inventory_adjust_stock", change)
        codes.append(code(result))
        if not result.is_error:
            return data_of(result)
        assert codes[-1] in RETRYABLE, texts(result)
        assert time.monotonic() - started < 15, codes
        await asyncio.sleep(0.1)


async def test_a_sentinel_failover_mid_stream_loses_doubles_and_strands_no_booking_and_the_tab_comes_back(
    tmp_path: Path, page: Page, engines: Engines
) -> None:
    sentinel, db = engines.sentinel, tmp_path / "inventory.db"
    sentinel.flush()
    with two_workers(sentinel.url, *SETTINGS, db=db, app=INVENTORY_APP) as (one, two):
        async with connect(one) as agent:
            opened = structured(await agent.call_tool("inventory", {"warehouse_code": "BER"}))
            await page.goto(on_worker(str(opened["url"]), two))
            await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
            view, codes, answers = str(opened["view"]), list[str](), list[int]()
            before = int((await on_hand_cell(page, SKU).inner_text()).replace(",", ""))
            old_master = sentinel.master_port()
            for number in range(FAILOVER_AFTER):
                answers.append((await book(agent, view, number, codes))["on_hand"])
            failing = asyncio.create_task(asyncio.to_thread(sentinel.failover))  # the bookings go on meanwhile
            during = 0
            while not failing.done():
                answers.append((await book(agent, view, len(answers), codes))["on_hand"])
                during += 1
            failed_over = time.monotonic()
            assert await failing != old_master and during > 0
            for _ in range(AFTER):  # on the new master
                answers.append((await book(agent, view, len(answers), codes))["on_hand"])
            await expect(on_hand_cell(page, SKU)).to_have_text(f"{answers[-1]:,}", timeout=10_000)
            assert time.monotonic() - failed_over < 10
            print(f"bookings during the failover: {during}; codes seen: {sorted(set(codes))}")
            new_master = sentinel.master_port()
            followed = await eventually(lambda: subscribers(new_master) == 2, 10, "both workers on the new master")
            assert subscribers(old_master) == 0 and failed_over + followed - time.monotonic() < 10
        for worker in (one, two):
            assert "Traceback" not in worker.output
    assert booked(db) == {f"FO-{n}": 1 for n in range(len(answers))}  # none lost, none doubled
    assert answers == list(range(before + 1, before + len(answers) + 1))  # each acknowledged, in order
    assert set(codes) <= RETRYABLE | {"OK"}, codes
