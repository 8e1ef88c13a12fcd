"""One fault per test, on two inventory workers sharing a database and the session's Redis, a person's tab on worker
w2 and the agent on w1: Redis killed and restarted empty, Redis stalled, a worker killed, a booking applied but never
acknowledged, retries racing each other; and a Postgres restart under one worker. Nothing is lost, nothing doubled,
every view comes back, and only retryable codes appear meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from playwright.async_api import Page, expect

from tests.support.cluster import eventually, on_worker, start_worker, two_workers
from tests.support.e2e import RunningServer, run_server
from tests.support.invariants import Ledger, movements
from tests.support.postgres import PostgresServer
from tests.support.redis import RedisServer
from tests.support.views import FAST, connect
from tests.views.inventory.support import INVENTORY_APP, data_of, on_hand_cell, structured, texts
from webapp import open_database
from webapp.bridge import view_digest

PRINCIPALS = ("kill", "stall", "dead", "unacked", "race", "watch", "stale")
SETTINGS = (*FAST, "--call-timeout", "20", *(arg for name in PRINCIPALS for arg in ("--token", f"{name}={name}-token")))
DEADLINE = 10.0  # seconds any one call may take to answer, whatever the fault
# the tab keeps receiving the changes but never confirms them (neither the confirm element's event nor a JavaScript
# round trip's answer leaves it): the call stays in flight
_NO_CONFIRMATION = """() => {
  const emit = window.socket.emit.bind(window.socket);
  const silent = new Set(["javascript_response", "event"]);
  window.socket.emit = (name, ...args) => (silent.has(name) ? window.socket : emit(name, ...args));
}"""


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults") / "shared.db"


@pytest.fixture(scope="module")
def workers(shared_db: Path, redis_server: RedisServer) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Worker w1 (the agents') and worker w2 (the tabs')."""
    if redis_server.process is None:
        redis_server.start()
    redis_server.flush()
    with two_workers(redis_server.url, *SETTINGS, db=shared_db, app=INVENTORY_APP) as pair:
        yield pair


def row(db: Path, handle: str) -> tuple[str, str | None]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT state, worker FROM webapp_views WHERE handle = ?", (handle,)).fetchone()


def on_hand(db: Path, sku: str, warehouse: str = "BER") -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        query = "SELECT on_hand FROM inventory_stock WHERE warehouse = ? AND sku = ?"
        return int(conn.execute(query, (warehouse, sku)).fetchone()[0])


def code(result: Any) -> str:
    text = texts(result)[0]
    return text.split('code="', 1)[1].split('"', 1)[0] if result.is_error else "OK"


async def open_tab(agent: Any, page: Page, worker: RunningServer) -> str:
    """The agent opens the BER view; the person's tab shows it on `worker`. Its handle."""
    data = structured(await agent.call_tool("inventory", {"warehouse_code": "BER"}))
    await page.goto(on_worker(str(data["url"]), worker))
    await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
    return str(data["view"])


def leased(port: int, handle: str) -> bool:
    with contextlib.closing(redis.Redis(port=port)) as client:
        return client.get(f"wv:{{{view_digest(handle)}}}:own") is not None


async def test_redis_killed_and_restarted_empty_keeps_the_views_reachable_and_their_leases_come_back(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, redis_server: RedisServer
) -> None:
    one, two = workers
    async with connect(one, token="kill-token") as agent:
        view = await open_tab(agent, page, two)
        before = on_hand(shared_db, "FST-1001")
        assert redis_server.process is not None
        redis_server.process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(redis_server.process.wait, 10)
        redis_server.stop()
        change = {"sku": "FST-1001", "delta": 2, "reason": "kill-1", "_call_id": "kill-1", "_view": view}
        ledger = Ledger(DEADLINE)
        failed = await ledger.call(agent, change)
        assert code(failed) == "BRIDGE_UNAVAILABLE" and ledger.bookings["kill-1"].slowest < 3
        await asyncio.to_thread(redis_server.start)  # empty: no lease, no epoch
        took = await eventually(lambda: leased(redis_server.port, view), 5, "the re-asserted lease")
        assert took < 2.5  # within a second of the inbox subscribing again
        done = data_of(await ledger.book(agent, change))
        assert done["on_hand"] == before + 2 == on_hand(shared_db, "FST-1001")
        ledger.check(movements(shared_db, "kill-"))
        assert row(shared_db, view) == ("live", "w2")
        await expect(on_hand_cell(page, "FST-1001")).to_have_text(f"{before + 2:,}")


async def test_an_older_directory_entry_after_a_failover_is_written_anew_and_the_tab_stays(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, redis_server: RedisServer
) -> None:
    one, _ = workers
    async with connect(one, token="stale-token") as agent:
        view = await open_tab(agent, page, workers[1])
        own = f"wv:{{{view_digest(view)}}}:own"
        with contextlib.closing(redis.Redis(port=redis_server.port, decode_responses=True)) as client:
            assert str(client.get(own) or "").startswith("w2|")
            client.set(own, "w1|1")  # what a replica that missed the tab's attach holds after a failover
            client.client_kill_filter(_type="pubsub")  # the workers subscribe again and write their entries again

            def claimed_anew() -> bool:
                return str(client.get(own) or "").startswith("w2|")

            await eventually(claimed_anew, 10, "the entry written anew")
        assert row(shared_db, view) == ("live", "w2")
        change = {"sku": "FST-1005", "delta": 1, "reason": "stale-1", "_call_id": "stale-1", "_view": view}
        ledger = Ledger(DEADLINE)
        await ledger.book(agent, change)
        ledger.check(movements(shared_db, "stale-"))
        await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")  # not "shown in another tab"


async def test_redis_stalled_fails_remote_calls_at_once_and_local_ones_keep_working(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, redis_server: RedisServer
) -> None:
    one, two = workers
    async with connect(one, token="stall-token") as far, connect(two, token="stall-token") as near:
        view = await open_tab(far, page, two)
        before = on_hand(shared_db, "FST-1002")
        change = {"sku": "FST-1002", "delta": 1, "_view": view}
        remote, here = {**change, "reason": "stall-1", "_call_id": "stall-1"}, {**change, "reason": "stall-2"}
        ledger = Ledger(DEADLINE)
        with redis_server.frozen():
            failed = await ledger.call(far, remote)
            assert code(failed) == "BRIDGE_UNAVAILABLE" and ledger.bookings["stall-1"].slowest < 3
            local = data_of(await ledger.call(near, {**here, "_call_id": "stall-2"}))
            assert local["on_hand"] == before + 1
        done = data_of(await ledger.book(far, remote))
        assert done["on_hand"] == before + 2 == on_hand(shared_db, "FST-1002")
        ledger.check(movements(shared_db, "stall-"))
        assert row(shared_db, view) == ("live", "w2")


async def test_a_killed_workers_views_are_released_without_a_call_and_its_tab_comes_back_elsewhere(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, redis_server: RedisServer
) -> None:
    one, _ = workers
    with contextlib.ExitStack() as victim:
        three = await start_worker(victim, "w3", redis_server.url, *SETTINGS, db=shared_db, app=INVENTORY_APP)
        async with connect(one, token="dead-token") as agent:
            view = await open_tab(agent, page, three)
            assert row(shared_db, view) == ("live", "w3")
            three.process.send_signal(signal.SIGKILL)
            took = await eventually(lambda: row(shared_db, view) == ("disconnected", None), 8, "the release")
            assert took < 5
            change = {"sku": "FST-1003", "delta": 4, "reason": "dead-1", "_call_id": "dead-1", "_view": view}
            ledger = Ledger(DEADLINE)
            failed = await ledger.call(agent, change)
            assert code(failed) == "VIEW_UNAVAILABLE" and ledger.bookings["dead-1"].slowest < 1
            before = on_hand(shared_db, "FST-1003")
            url = page.url.replace(f":{three.base_url.rsplit(':', 1)[1]}", f":{one.base_url.rsplit(':', 1)[1]}")
            await page.goto(url)  # as the load balancer sends the reconnecting tab to a live worker
            await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
            done = data_of(await ledger.book(agent, change))
            assert done["on_hand"] == before + 4 == on_hand(shared_db, "FST-1003")
            ledger.check(movements(shared_db, "dead-"))
            assert row(shared_db, view) == ("live", "w1")


async def test_changes_a_killed_worker_still_held_for_its_events_window_reach_the_other_workers_views(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, redis_server: RedisServer
) -> None:
    one, two = workers
    with contextlib.ExitStack() as victim:
        three = await start_worker(
            victim, "w3", redis_server.url, *SETTINGS, "--events-budget", "1", db=shared_db, app=INVENTORY_APP
        )
        async with connect(one, token="dead-token") as agent, connect(one, token="watch-token") as watcher:
            view = await open_tab(agent, page, three)
            watching = await page.context.new_page()
            await open_tab(watcher, watching, two)
            before = on_hand(shared_db, "FST-1003")
            for number in (1, 2):  # the second within w3's window (3 workers read: 3² / 1 s, at most 1 s): held
                change = {"sku": "FST-1003", "delta": 1, "reason": f"PO-{number}", "_view": view}
                assert code(await agent.call_tool("inventory_adjust_stock", change)) == "OK"
            three.process.send_signal(signal.SIGKILL)
            assert on_hand(shared_db, "FST-1003") == before + 2
            # w2 reads its views' stock again once it finds w3 gone: what w3 never sent is shown all the same
            await expect(on_hand_cell(watching, "FST-1003")).to_have_text(f"{before + 2:,}", timeout=10_000)
            await watching.close()


async def test_a_booking_applied_but_never_acknowledged_answers_its_retries_with_the_stored_outcome(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, redis_server: RedisServer
) -> None:
    one, two = workers
    async with connect(one, token="unacked-token") as agent, connect(two, token="unacked-token") as elsewhere:
        view = await open_tab(agent, page, two)
        before = on_hand(shared_db, "FST-1004")
        await page.evaluate(_NO_CONFIRMATION)
        change = {"sku": "FST-1004", "delta": 5, "reason": "PO-4", "_call_id": "unacked-1", "_view": view}
        in_flight = asyncio.create_task(agent.call_tool("inventory_adjust_stock", change))
        await expect(on_hand_cell(page, "FST-1004")).to_have_text(f"{before + 5:,}")  # booked, not confirmed
        with redis_server.frozen():
            lost = await in_flight
        assert code(lost) == "BRIDGE_UNAVAILABLE"
        again = data_of(await agent.call_tool("inventory_adjust_stock", change))
        there = data_of(await elsewhere.call_tool("inventory_adjust_stock", change))
        assert again == there and again["on_hand"] == before + 5 == on_hand(shared_db, "FST-1004")


async def test_retries_racing_on_both_workers_book_once_and_all_get_the_same_answer(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path
) -> None:
    one, two = workers
    async with connect(one, token="race-token") as far, connect(two, token="race-token") as near:
        view = await open_tab(far, page, two)
        before = on_hand(shared_db, "FST-1005")
        move = {"sku": "FST-1005", "from_warehouse": "BER", "to_warehouse": "HAM", "quantity": 1}
        call = {**move, "_call_id": "race-1", "_view": view}
        results = await asyncio.gather(
            *(agent.call_tool("inventory_transfer_stock", call) for agent in (far, near, far, near, far, near))
        )
        assert all(not result.is_error for result in results), [texts(result) for result in results]
        assert len({str(structured(result)) for result in results}) == 1
        assert on_hand(shared_db, "FST-1005") == before - 1
        other = await near.call_tool("inventory_transfer_stock", {**call, "quantity": 2})
        assert code(other) == "INVALID_INPUT" and on_hand(shared_db, "FST-1005") == before - 1


async def test_a_postgres_restart_answers_store_unavailable_and_the_retry_books_once(
    postgres: PostgresServer, page: Page, tmp_path: Path
) -> None:
    url = postgres.new_database()

    def stock() -> tuple[int, int]:
        with contextlib.closing(open_database(url)) as db:
            query = "SELECT on_hand FROM inventory_stock WHERE warehouse = 'BER' AND sku = 'FST-1006'"
            (units,) = db.execute(query).fetchone()
            (moved,) = db.execute("SELECT count(*) FROM inventory_movements").fetchone()
        return int(units), int(moved)

    with contextlib.ExitStack() as stack:
        alone = run_server(*FAST, db=url, app=INVENTORY_APP, cwd=tmp_path)
        server = await asyncio.to_thread(stack.enter_context, alone)
        async with connect(server) as agent:
            view = await open_tab(agent, page, server)
            units, moved = stock()
            await asyncio.to_thread(postgres.restart)  # every connection of the worker is cut
            change = {"sku": "FST-1006", "delta": 3, "reason": "pg-1", "_call_id": "pg-1", "_view": view}
            ledger = Ledger(DEADLINE)
            done = data_of(await ledger.book(agent, change))
            seen = ledger.codes("pg-1")
            assert seen[0] == "STORE_UNAVAILABLE" and set(seen[:-1]) == {"STORE_UNAVAILABLE"}, seen
            assert done["on_hand"] == units + 3 and stock() == (units + 3, moved + 1)
            again = data_of(await agent.call_tool("inventory_adjust_stock", change))
            assert again == done and stock() == (units + 3, moved + 1)
            ledger.check(movements(url, "pg-"))
            await expect(on_hand_cell(page, "FST-1006")).to_have_text(f"{units + 3:,}")
