"""The call log of two workers on one database and one Redis: call records cross Redis only while a viewer follows
the log somewhere; each worker's viewer lists the calls of both, live and from the shared table (made before it
started or while nobody watched), labelled with their worker; neither overwrites the other's rows; no secret goes
through Redis."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any, cast

import redis.asyncio as aioredis
from playwright.async_api import Page, expect

from tests.support.cluster import start_worker
from tests.support.views import COUNTER_APP, FAST, attach_key, connect, structured
from webapp.calllog import TOPIC as CALLS_TOPIC
from webapp.cluster import EVENTS_CHANNEL, inbox_channel
from webapp.cluster.relay import read_frame

WAIT = 10_000  # ms: the bound of every wait for the browser


async def _listen(redis_url: str, heard: list[bytes], ready: asyncio.Event, shared: asyncio.Event) -> None:
    """Every message published on the workers' sharded channels (the events', both inboxes), into `heard` (until
    cancelled); `shared` is set at the first call record."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        async with client.pubsub() as pubsub:
            for channel in (EVENTS_CHANNEL, inbox_channel("w1"), inbox_channel("w2")):
                await pubsub.ssubscribe(channel)
            ready.set()
            async for message in pubsub.listen():
                if message["type"] == "smessage":
                    heard.append(message["data"])
                    if _records([message["data"]]):
                        shared.set()
    finally:
        await client.aclose()


def _records(heard: list[bytes]) -> list[dict[str, Any]]:
    """The call records in the events frames heard."""
    found: list[dict[str, Any]] = []
    for data in heard:
        with contextlib.suppress(ValueError):
            events = read_frame(data)[1]
            found += [cast(dict[str, Any], event.payload) for event in events if event.topic == CALLS_TOPIC]
    return found


def _readable(data: bytes) -> bytes:
    """An events frame as its header and event texts, inflated; any other message unchanged."""
    try:
        _, events = read_frame(data)
    except ValueError:
        return data
    return data.partition(b"\n")[0] + b"\n" + b"\n".join(event.text.encode() for event in events)


def _stored(db: Path) -> list[tuple[str, int, str]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT worker, seq, tool FROM webapp_calls ORDER BY worker, seq").fetchall()


async def test_call_records_cross_workers_only_while_a_viewer_follows_and_each_viewer_lists_every_workers_calls(
    page: Page, redis_db: str, tmp_path: Path
) -> None:
    db = tmp_path / "shared.db"
    heard: list[bytes] = []
    ready, shared = asyncio.Event(), asyncio.Event()
    listener = asyncio.create_task(_listen(redis_db, heard, ready, shared))
    await asyncio.wait_for(ready.wait(), 10)
    try:
        with contextlib.ExitStack() as stack:
            one = await start_worker(stack, "w1", redis_db, *FAST, db=db, app=COUNTER_APP)
            async with connect(one) as agent:
                opened: dict[str, Any] = structured(await agent.call_tool("counter", {"title": "Before"}))
                two = await start_worker(stack, "w2", redis_db, *FAST, db=db, app=COUNTER_APP)
                await page.goto(f"{two.base_url}/viewer")
                await expect(page.locator(".wv-scope")).to_have_text(
                    "Calls of every worker · this page is served by w2", timeout=WAIT
                )
                rows = page.locator(".wv-call")
                await expect(rows).to_have_count(1, timeout=WAIT)  # made while nobody watched: the shared table
                await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w1")
                assert not _records(heard)  # it never crossed Redis
                pings = 0
                while not shared.is_set():  # w1 learns at its next look (once a second) that a viewer follows
                    assert pings < 20, "w1 never shared a call record while a viewer followed the log"
                    await agent.call_tool("ping", {})
                    pings += 1
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(shared.wait(), 0.5)
                await agent.call_tool("counter_increment", {"_view": opened["view"]})  # its record names the view
                await expect(rows).to_have_count(2 + pings, timeout=WAIT)  # live, or read again from the table
                await expect(rows.first.locator(".wv-call-tool")).to_have_text("counter_increment")
                await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w1")
            async with connect(two) as other:
                await other.call_tool("ping", {})
            await expect(rows).to_have_count(3 + pings, timeout=WAIT)
            await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w2")
            await rows.nth(1).click()  # w1's last call: its detail names its worker, its link too
            await expect(page).to_have_url(f"{two.base_url}/viewer?call=w1:{2 + pings}", timeout=WAIT)
            await expect(page.locator(".wv-meta")).to_contain_text("worker")
            await page.goto(f"{one.base_url}/viewer?call=w2:1")  # w1's viewer has w2's call as well
            await expect(page.locator(".wv-call")).to_have_count(3 + pings, timeout=WAIT)
            await expect(page.locator(".wv-call-selected .wv-call-worker")).to_have_text("worker w2")
            pinged = [("w1", seq, "ping") for seq in range(2, 2 + pings)]
            w1_calls = [("w1", 1, "counter"), *pinged, ("w1", 2 + pings, "counter_increment")]
            assert _stored(db) == [*w1_calls, ("w2", 1, "ping")]
    finally:
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
    records = _records(heard)
    assert records and ("w1", 1) not in {(record["worker"], record["seq"]) for record in records}
    readable = [_readable(data) for data in heard]  # the events' frames inflated, the inboxes' messages as they are
    for secret in (opened["view"], attach_key(str(opened["url"]))):
        assert not any(secret.encode() in text for text in readable)
    assert any(f"{opened['view'][:6]}…" in str(record) for record in records)  # the increment's record: masked
