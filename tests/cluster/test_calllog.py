"""The call log of two workers on one database and one Redis: each worker's viewer lists the calls of both, live and
from before it started, labelled with their worker; neither overwrites the other's rows; no secret goes through
Redis."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from playwright.async_api import Page, expect

from tests.support.cluster import start_worker
from tests.support.views import COUNTER_APP, FAST, attach_key, connect, structured
from webapp.cluster import EVENTS_CHANNEL, inbox_channel
from webapp.cluster.relay import read_frame

WAIT = 10_000  # ms: the bound of every wait for the browser


async def _listen(redis_url: str, heard: list[bytes], ready: asyncio.Event) -> None:
    """Every message published on the workers' sharded channels (the events', both inboxes), into `heard` (until
    cancelled)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        async with client.pubsub() as pubsub:
            for channel in (EVENTS_CHANNEL, inbox_channel("w1"), inbox_channel("w2")):
                await pubsub.ssubscribe(channel)
            ready.set()
            async for message in pubsub.listen():
                if message["type"] == "smessage":
                    heard.append(message["data"])
    finally:
        await client.aclose()


def _stored(db: Path) -> list[tuple[str, int, str]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT worker, seq, tool FROM webapp_calls ORDER BY worker, seq").fetchall()


async def test_each_workers_viewer_lists_the_calls_of_both_and_their_rows_stay_apart(
    page: Page, redis_db: str, tmp_path: Path
) -> None:
    db = tmp_path / "shared.db"
    heard: list[bytes] = []
    ready = asyncio.Event()
    listener = asyncio.create_task(_listen(redis_db, heard, ready))
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
                await expect(rows).to_have_count(1, timeout=WAIT)  # from before w2 started: the shared table
                await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w1")
                await agent.call_tool("ping", {})  # made on w1 while w2's page is open: it arrives live
                await expect(rows).to_have_count(2, timeout=WAIT)
                await expect(rows.first.locator(".wv-call-tool")).to_have_text("ping")
                await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w1")
            async with connect(two) as other:
                await other.call_tool("ping", {})
            await expect(rows).to_have_count(3, timeout=WAIT)
            await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w2")
            await rows.nth(1).click()  # w1's ping: its detail names its worker, its link too
            await expect(page).to_have_url(f"{two.base_url}/viewer?call=w1:2", timeout=WAIT)
            await expect(page.locator(".wv-meta")).to_contain_text("worker")
            await page.goto(f"{one.base_url}/viewer?call=w2:1")  # w1's viewer has w2's call as well
            await expect(page.locator(".wv-call")).to_have_count(3, timeout=WAIT)
            await expect(page.locator(".wv-call-selected .wv-call-worker")).to_have_text("worker w2")
            assert _stored(db) == [("w1", 1, "counter"), ("w1", 2, "ping"), ("w2", 1, "ping")]
    finally:
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
    readable = [_readable(data) for data in heard]  # the events' frames inflated, the inboxes' messages as they are
    shared = [text for text in readable if b"webapp/calls" in text]
    assert len(shared) == 3, heard
    for secret in (opened["view"], attach_key(str(opened["url"]))):
        assert not any(secret.encode() in text for text in readable)
    assert f"{opened['view'][:6]}…".encode() in shared[0]


def _readable(data: bytes) -> bytes:
    """An events frame as its header and event texts, inflated; any other message unchanged."""
    try:
        _, events = read_frame(data)
    except ValueError:
        return data
    return data.partition(b"\n")[0] + b"\n" + b"\n".join(event.text.encode() for event in events)
