"""Stock changes across workers, with the inventory app on two workers sharing one SQLite file and Redis: an agent's
change through its view on worker A shows in a person's tab on worker B, the person's change there shows in the
agent's view on A, and each change is one SPUBLISH on the events channel, none on an inbox (no bridge command)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import orjson
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from playwright.async_api import Browser, Page, expect
from redis.asyncio.client import PubSub

from tests.support.cluster import command_counts, on_worker, two_workers, watch_channels
from tests.support.e2e import RunningServer
from tests.support.redis import RedisServer
from tests.views.inventory.support import (
    CHART_SHOWS,
    INVENTORY_APP,
    call,
    data_of,
    held_client,
    on_hand_cell,
    snapshot,
    stock_row,
    structured,
    units_per_category,
)
from webapp.cluster import EVENTS_CHANNEL
from webapp.cluster.relay import frame, read_frame
from webapp.events import Event

WAIT = 10_000  # ms, for a tab to show a change from the other worker


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("events") / "inventory.db"


@pytest.fixture(scope="module")
def workers(shared_db: Path, redis_server: RedisServer) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Workers w1 (the agent's) and w2 (the person's), both serving the inventory app."""
    redis_server.flush()
    with two_workers(redis_server.url, "--reconnect-grace", "2", db=shared_db, app=INVENTORY_APP) as pair:
        yield pair


@pytest_asyncio.fixture(loop_scope="session")
async def tabs(browser: Browser) -> AsyncIterator[tuple[Page, Page]]:
    """The agent's tab and the person's, in browser contexts of their own (each gets its own worker's cookie)."""
    contexts = [await browser.new_context(viewport={"width": 1440, "height": 1000}) for _ in range(2)]
    try:
        yield await contexts[0].new_page(), await contexts[1].new_page()
    finally:
        for context in contexts:
            await context.close()


def _shown(value: int) -> str:
    return f"{value:,}"


async def test_stock_changes_reach_the_views_on_the_other_worker_with_one_publish_each_and_no_bridge_command(
    workers: tuple[RunningServer, RunningServer], tabs: tuple[Page, Page], shared_db: Path, redis_server: RedisServer
) -> None:
    one, two = workers
    agents_tab, persons_tab = tabs
    async with held_client(one.mcp_url) as agent:
        opened = structured(await call(agent, "inventory", warehouse_code="BER"))
        await agents_tab.goto(on_worker(str(opened["url"]), one))  # the agent's view lives on w1
        await expect(agents_tab.get_by_test_id("warehouse-code")).to_have_text("BER")
        await persons_tab.goto(two.base_url + "/inventory")  # a person's view of BER on w2
        await expect(persons_tab.get_by_test_id("warehouse-code")).to_have_text("BER")

        sku, other = "FST-1003", "TLS-2004"
        before = snapshot(shared_db)
        async with watch_channels(redis_server.url) as channels:
            commands = command_counts(redis_server.port)
            adjusted = data_of(await call(agent, "inventory_adjust_stock", sku=sku, delta=3, reason="Cycle count"))
            assert adjusted["on_hand"] == before.on_hand(sku) + 3
            await expect(on_hand_cell(persons_tab, sku)).to_have_text(_shown(before.on_hand(sku) + 3), timeout=WAIT)
            await channels.settled()  # its marker is one SPUBLISH of the test's own
            published = command_counts(redis_server.port).get("spublish", 0) - commands.get("spublish", 0) - 1
            # one publish for the change; no bridge command, and no call record: no viewer follows the call log
            assert channels.counts == {EVENTS_CHANNEL: 1} and published == 1

            await stock_row(persons_tab, other).locator("td").first.click()  # the person restocks through the page
            await persons_tab.get_by_test_id("adjust-delta").fill("5")
            await persons_tab.get_by_test_id("adjust-reason").fill("Returned from W-7")
            await persons_tab.get_by_test_id("adjust-apply").click()
            await expect(on_hand_cell(agents_tab, other)).to_have_text(_shown(before.on_hand(other) + 5), timeout=WAIT)
            latest = agents_tab.get_by_test_id("movement-feed").locator("[data-actor]").first
            await expect(latest).to_contain_text("Returned from W-7")
            await expect(latest).to_have_attribute("data-actor", "person")
            await channels.settled()
            published = command_counts(redis_server.port).get("spublish", 0) - commands.get("spublish", 0) - 2
            assert channels.counts == {EVENTS_CHANNEL: 2} and published == 2  # a page makes no call

        answer = data_of(await call(agent, "inventory_select_item", sku=other))  # the agent's next call on w1
        assert answer["on_hand"] == before.on_hand(other) + 5
    for worker in workers:
        assert "Traceback" not in worker.output


async def test_a_change_older_than_what_a_view_shows_is_ignored_when_it_reaches_the_view_late(
    workers: tuple[RunningServer, RunningServer], tabs: tuple[Page, Page], shared_db: Path, redis_server: RedisServer
) -> None:
    """Two workers' changes can reach a third view out of commit order: each change carries its version (its newest
    movement's id), and a view shows the newest it got of each item and of each category's totals (a change carries
    its own categories' only). Forged late frames stand in for the slow worker."""
    one, two = workers
    agents_tab, persons_tab = tabs
    sku, other, third = "FST-1004", "TLS-2005", "SAF-5006"
    before = snapshot(shared_db)
    client = aioredis.Redis.from_url(redis_server.url)
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await pubsub.ssubscribe(EVENTS_CHANNEL)
    try:
        async with held_client(one.mcp_url) as agent:  # first: a person's view opened before would be adopted
            opened = structured(await call(agent, "inventory", warehouse_code="BER"))
            await agents_tab.goto(on_worker(str(opened["url"]), one))
            await expect(agents_tab.get_by_test_id("warehouse-code")).to_have_text("BER")
            await persons_tab.goto(two.base_url + "/inventory")  # a person's view of BER on w2
            await expect(persons_tab.get_by_test_id("warehouse-code")).to_have_text("BER")
            before_chart = await units_per_category(agent)
            adjusted = data_of(await call(agent, "inventory_adjust_stock", sku=sku, delta=2, reason="Cycle count"))
            assert adjusted["on_hand"] == before.on_hand(sku) + 2
        await expect(on_hand_cell(persons_tab, sku)).to_have_text(_shown(before.on_hand(sku) + 2), timeout=WAIT)
        published = await _next_change(pubsub)
    finally:
        await pubsub.aclose()
    change = orjson.loads(published.text)
    (fasteners,) = change["touched_categories"]  # only the category of the change's row, with its new totals
    assert fasteners["group"] == "Fasteners" and fasteners["units_on_hand"] == before_chart["Fasteners"] + 2
    shown = change["version"]

    async def forge(version: int, row_sku: str, category: str, units: int) -> None:
        """A change of `row_sku` to `units` on hand, `units` being its category's units too."""
        row = change["rows"][0] | {"sku": row_sku, "category": category, "on_hand": units}
        totals = fasteners | {"group": category, "units_on_hand": units}
        forged = change | {"version": version, "rows": [row], "movements": [], "touched_categories": [totals]}
        late = Event("inventory/stock/BER", orjson.dumps(forged).decode())
        await client.spublish(EVENTS_CHANNEL, frame("w9", [late]))

    try:
        await forge(shown - 1, sku, "Fasteners", 4242)  # older than the change the view shows: ignored
        await forge(shown + 10**6, other, "Hand tools", 4343)  # newer: shown, after the older one was handled
        await forge(shown + 10**6 - 1, other, "Hand tools", 4141)  # older than the last of its item and category
        await forge(shown + 10**6 - 2, third, "Safety", 4040)  # older than the last, the newest of its own
        await expect(on_hand_cell(persons_tab, other)).to_have_text(_shown(4343), timeout=WAIT)
        await expect(on_hand_cell(persons_tab, third)).to_have_text(_shown(4040), timeout=WAIT)
        await expect(on_hand_cell(persons_tab, sku)).to_have_text(_shown(before.on_hand(sku) + 2))
        expected = before_chart | {"Fasteners": fasteners["units_on_hand"], "Hand tools": 4343, "Safety": 4040}
        await persons_tab.wait_for_function(CHART_SHOWS, arg=expected, timeout=WAIT)  # drawn at most once a second
    finally:
        await client.aclose()


async def _next_change(pubsub: PubSub) -> Event:
    """The next inventory change on the events channel (other app events, e.g. call records, are skipped)."""
    async with asyncio.timeout(10):
        async for message in pubsub.listen():
            _, events = read_frame(bytes(message["data"]))
            for event in events:
                if event.topic.startswith("inventory/stock/"):
                    return event
    raise AssertionError("no inventory change was published")
