"""Network faults between the workers and Redis (apps.md §14.2), one per test, made by a fault proxy in front of each
worker's Redis: a request Redis delivers twice, a subscription that goes deaf without an error, a worker cut off from
Redis but not from the database; and one live tab per view across workers. Two inventory workers share a database,
the person's tab on w2, the agent on w1; after each fault the ledger of bookings holds: acknowledged is applied, once
each, and every call answers in time."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.cluster.test_faults import on_hand, open_tab, row
from tests.support.cluster import eventually, on_worker
from tests.support.e2e import RunningServer, run_server
from tests.support.fault_proxy import FaultProxy
from tests.support.invariants import MOVED_NOTICE, Ledger, movements, one_live_tab
from tests.support.redis import RedisServer
from tests.support.views import FAST, connect, texts
from tests.views.inventory.support import INVENTORY_APP, on_hand_cell
from webapp.bridge import view_digest
from webapp.cluster import Engine, Inbox, Leases
from webapp.core import ProgressReporter
from webapp.core.context import LogSender

PRINCIPALS = ("twice", "deaf", "cut", "split", "guest", "taken", "fence")
SETTINGS = (*FAST, "--call-timeout", "8", *(arg for name in PRINCIPALS for arg in ("--token", f"{name}={name}-token")))
DEADLINE = 10.0  # seconds any one call may take to answer, whatever the fault


@dataclass(frozen=True)
class Net:
    """Worker w1 (the agents') and w2 (the tabs'), each reaching Redis through a proxy of its own."""

    one: RunningServer
    two: RunningServer
    to_redis_one: FaultProxy
    to_redis_two: FaultProxy
    db: Path


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Iterator[Net]:
    if redis_server.process is None:
        redis_server.start()
    redis_server.flush()
    db = tmp_path_factory.mktemp("network-faults") / "shared.db"
    with contextlib.ExitStack() as stack:
        proxies = [stack.enter_context(FaultProxy(redis_server.port)) for _ in "12"]
        one, two = (
            stack.enter_context(
                run_server("--redis-url", proxy.url, "--worker-id", name, *SETTINGS, app=INVENTORY_APP, db=db)
            )
            for proxy, name in zip(proxies, ("w1", "w2"), strict=True)
        )
        yield Net(one, two, proxies[0], proxies[1], db)


def lines_after(server: RunningServer, mark: int, pattern: str) -> list[str]:
    """The output lines of `server` after its first `mark` lines that match `pattern`."""
    return [line for line in server.lines[mark:] if re.search(pattern, line)]


async def test_a_request_redis_delivered_twice_books_once(net: Net, page: Page) -> None:
    ledger = Ledger(DEADLINE)
    async with connect(net.one, token="twice-token") as agent:
        view = await open_tab(agent, page, net.two)
        before = on_hand(net.db, "FST-1001")
        net.to_redis_one.duplicate(b"wv:{w2}:inbox")  # the SPUBLISH that carries the call to w2, sent twice
        change = {"sku": "FST-1001", "delta": 3, "reason": "twice-1", "_view": view}  # no _call_id: nothing stored
        await ledger.book(agent, change)
        assert ledger.bookings["twice-1"].acknowledged and net.to_redis_one.duplicates == 1
        assert not (await agent.call_tool("inventory_refresh_stock", {"_view": view})).is_error  # after the copy
    ledger.check(movements(net.db, "twice-"))
    assert on_hand(net.db, "FST-1001") == before + 3
    await expect(on_hand_cell(page, "FST-1001")).to_have_text(f"{before + 3:,}")


async def test_a_deaf_subscription_is_noticed_and_subscribed_again_and_calls_answer_within_ten_seconds(
    net: Net, page: Page
) -> None:
    ledger = Ledger(DEADLINE)
    async with connect(net.one, token="deaf-token") as agent:
        view = await open_tab(agent, page, net.two)
        mark = len(net.two.lines)
        net.to_redis_two.black_hole()  # w2's subscription and command connections carry nothing more; new ones pass
        held = time.monotonic()
        took = await eventually(lambda: bool(lines_after(net.two, mark, "w2 subscribed again")), 10, "a resubscribe")
        assert took < 5, took
        for number in range(3):
            change = {"sku": "FST-1002", "delta": 1, "reason": f"deaf-{number}", "_view": view}
            await ledger.book(agent, {**change, "_call_id": f"deaf-{number}"})
            assert ledger.bookings[f"deaf-{number}"].acknowledged
        assert time.monotonic() - held < 3 * DEADLINE
    ledger.check(movements(net.db, "deaf-"))
    assert row(net.db, view) == ("live", "w2")


async def test_a_worker_cut_off_from_redis_but_not_the_database_has_its_views_released_once(
    net: Net, page: Page
) -> None:
    ledger = Ledger(DEADLINE)
    async with connect(net.one, token="cut-token") as agent:
        view = await open_tab(agent, page, net.two)
        one_mark, two_mark = len(net.one.lines), len(net.two.lines)
        net.to_redis_two.black_hole(new=True)  # a partition: w2 keeps the database and its tab, loses Redis
        try:
            await eventually(lambda: bool(lines_after(net.one, one_mark, "w2 is gone")), 15, "w2's views released")

            def looks_since_release() -> int:  # w2 tries a look a second and fails while it cannot reach Redis
                return len(lines_after(net.two, two_mark, "w2 could not look after its views"))

            looked = looks_since_release()
            await eventually(lambda: looks_since_release() >= looked + 4, 15, "four more looks of w2")
            assert len(lines_after(net.one, one_mark, "w2 is gone")) == 1, net.one.lines[one_mark:]  # once
            assert not lines_after(net.two, two_mark, "taken back")  # w2 takes nothing back while it cannot beat
        finally:
            net.to_redis_two.heal()
        await eventually(lambda: row(net.db, view) == ("live", "w2"), 15, "w2 holding its view again")
        change = {"sku": "FST-1003", "delta": 2, "reason": "cut-1", "_call_id": "cut-1", "_view": view}
        await ledger.book(agent, change)
    ledger.check(movements(net.db, "cut-"))


async def test_a_second_tab_through_another_worker_detaches_the_first_within_five_seconds(net: Net, page: Page) -> None:
    ledger = Ledger(DEADLINE)
    async with connect(net.one, token="split-token") as agent:
        view = await open_tab(agent, page, net.two)  # the person's first tab, on w2
        second = await page.context.new_page()
        try:
            await second.goto(on_worker(page.url, net.one))  # the same link, which a balancer sent to w1
            await expect(second.get_by_test_id("warehouse-code")).to_have_text("BER")
            assert await one_live_tab(page, second) < 5
            await expect(page.get_by_text(MOVED_NOTICE)).to_be_visible()  # the older one says so
            assert row(net.db, view) == ("live", "w1")
            change = {"sku": "FST-1004", "delta": 1, "reason": "split-1", "_call_id": "split-1", "_view": view}
            await ledger.book(agent, change)
            await expect(on_hand_cell(second, "FST-1004")).to_have_text(f"{on_hand(net.db, 'FST-1004'):,}")
        finally:
            await second.close()
    ledger.check(movements(net.db, "split-"))


async def test_a_guest_page_elsewhere_never_takes_a_persons_tab_and_a_persons_tab_always_does(
    net: Net, page: Page, redis_server: RedisServer
) -> None:
    async with connect(net.one, token="guest-token") as agent:
        view = await open_tab(agent, page, net.two)  # a person's tab on w2
        asking = Engine(redis_server.url, connect_timeout=1)  # a third worker, asking as w1 would before an attach
        inbox = Inbox(asking, Leases(asking.client, "w9"), _asked_nothing)
        await inbox.start()
        try:
            target = view_digest(view)
            assert await inbox.request("w2", {"take": target, "guest": True}, DEADLINE) == {"keeps": True}
            await expect(page.get_by_test_id("warehouse-code")).to_have_text("BER")
            assert await page.get_by_text(MOVED_NOTICE).count() == 0  # a booted or tunnelled page gets the card
            assert await inbox.request("w2", {"take": target, "guest": False}, DEADLINE) == {"keeps": False}
            await expect(page.get_by_text(MOVED_NOTICE)).to_be_visible()  # newest wins between a person's tabs
        finally:
            await inbox.stop()
            await asking.aclose()


async def _asked_nothing(
    body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None
) -> dict[str, Any]:
    raise AssertionError("nobody asks the test's worker anything")


async def test_a_tab_that_takes_a_view_from_a_worker_cut_off_from_redis_detaches_the_first_within_five_seconds(
    net: Net, page: Page
) -> None:
    async with connect(net.one, token="taken-token") as agent:
        await open_tab(agent, page, net.two)  # the person's first tab, on w2
        mark = len(net.two.lines)
        net.to_redis_two.black_hole(new=True)  # w2 cannot be asked to let the view go, nor told
        second = await page.context.new_page()
        try:
            await second.goto(on_worker(page.url, net.one))
            await expect(second.get_by_test_id("warehouse-code")).to_have_text("BER")
            assert await one_live_tab(page, second) < 5  # w2 reads that w1's tab took it, and says so
        finally:
            net.to_redis_two.heal()
            await second.close()
        await eventually(lambda: bool(lines_after(net.two, mark, "w2 subscribed again")), 15, "w2 back on Redis")


async def test_a_write_another_workers_attach_fenced_off_tells_the_tab_and_answers_a_retryable_code(
    net: Net, page: Page
) -> None:
    async with connect(net.two, token="fence-token") as agent:  # on the worker that holds the tab: a local call
        view = await open_tab(agent, page, net.two)
        with contextlib.closing(sqlite3.connect(net.db)) as conn, conn:  # a newer attach elsewhere, not heard of here
            conn.execute("UPDATE webapp_views SET worker = 'w9' WHERE handle = ?", (view,))
        lost = await agent.call_tool("inventory_update", {"_view": view, "search": "FST"})  # the view's data changes
        assert lost.is_error and 'code="VIEW_UNAVAILABLE"' in texts(lost)[0]
        await expect(page.get_by_text(MOVED_NOTICE)).to_be_visible()  # nothing dropped silently: the tab is told
        assert row(net.db, view)[1] == "w9"  # and the newer holder's row stands
