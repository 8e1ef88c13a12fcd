"""Two workers on one database and one Redis: an agent on worker A drives a view whose tab is on worker B (its progress
reports included), a call to a local view never touches Redis, Redis going away fails remote calls at once, a starting
worker leaves the other's views alone, and principals stay apart across workers."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from playwright.async_api import Page, expect

from tests.support.cluster import command_counts, on_worker, start_worker, two_workers, watch_channels
from tests.support.e2e import RunningServer
from tests.support.redis import RedisServer
from tests.support.views import COUNTER_APP, FAST, connect, structured, texts
from webapp.bridge import view_digest
from webapp.cluster import Engine, Inbox, Leases, heartbeat_key

# one principal per test: a principal's only open view is reused by its next opening call
PRINCIPALS = ("auto", "legacy", "near", "quiet", "redis", "start", "move", "drain", "alice", "bob")
SETTINGS = (*FAST, "--call-timeout", "20", *(arg for name in PRINCIPALS for arg in ("--token", f"{name}={name}-token")))
ALICE, BOB = "alice-token", "bob-token"


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cluster") / "shared.db"


@pytest.fixture(scope="module")
def workers(shared_db: Path, redis_server: RedisServer) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Worker w1 (the agent's) and worker w2 (the tab's)."""
    redis_server.flush()
    with two_workers(redis_server.url, *SETTINGS, db=shared_db, app=COUNTER_APP) as pair:
        yield pair


def stored(db: Path, handle: str) -> tuple[str, str | None]:
    """The view's state and holder as the database has them."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT state, worker FROM webapp_views WHERE handle = ?", (handle,)).fetchone()


async def open_on(agent: Any, page: Page, worker: RunningServer, title: str) -> dict[str, Any]:
    """Open a counter view through the agent's worker and its tab on `worker`."""
    data = structured(await agent.call_tool("counter", {"title": title}))
    await page.goto(on_worker(str(data["url"]), worker))
    await expect(page.get_by_test_id("title")).to_have_text(title)
    return data


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_agent_on_one_worker_drives_a_view_whose_tab_is_on_the_other(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path, mode: Literal["auto", "legacy"]
) -> None:
    one, two = workers
    async with connect(one, token=f"{mode}-token", mode=mode) as agent:
        data = await open_on(agent, page, two, f"Far {mode}")
        assert stored(shared_db, data["view"]) == ("live", "w2")
        bumped = await agent.call_tool("counter_increment", {"by": 3, "_view": data["view"]})
        assert structured(bumped) == {"count": 3}
        await expect(page.get_by_test_id("count")).to_have_text("3")
        renamed = await agent.call_tool("counter_update", {"title": "Renamed", "_view": data["view"]})
        assert texts(renamed) == ["Counter updated: title."]
        await expect(page.get_by_test_id("title")).to_have_text("Renamed")
        reused = structured(await agent.call_tool("counter", {"start": 7, "_view": data["view"]}))
        assert reused["reused"] is True and reused["state"] == "live"
        await expect(page.get_by_test_id("count")).to_have_text("7")
        assert structured(await agent.call_tool("counter_peek", {"_view": data["view"]})) == {
            "count": 7,
            "title": "Renamed",
        }
        reported: list[tuple[float, float | None, str | None]] = []

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            reported.append((progress, total, message))

        counted = await agent.call_tool("counter_count_to", {"n": 3, "_view": data["view"]}, progress_callback=progress)
        assert texts(counted) == ["counted to 3"]
        assert reported == [(1, 3, "counted 1"), (2, 3, "counted 2"), (3, 3, "counted 3")]  # from w2, through w1
        await expect(page.get_by_test_id("status")).to_have_text("counted to 3")
    for worker in workers:
        assert data["view"] not in worker.output


async def test_a_call_to_a_view_attached_on_its_own_worker_sends_no_bridge_command_to_redis(
    workers: tuple[RunningServer, RunningServer], page: Page, redis_server: RedisServer
) -> None:
    one, _ = workers
    async with connect(one, token="near-token") as agent:
        data = await open_on(agent, page, one, "Near")
        async with watch_channels(redis_server.url) as channels:
            before = command_counts(redis_server.port)
            for step in range(1, 21):
                bumped = await agent.call_tool("counter_increment", {"_view": data["view"]})
                assert structured(bumped) == {"count": step}
            await channels.settled()
            after = command_counts(redis_server.port)
    grown = {name: after.get(name, 0) - before.get(name, 0) for name in ("spublish", "publish")}
    # no SPUBLISH but the test's own marker: none to an inbox (a bridge call), no app event (the counter app
    # publishes none; tests/cluster/test_events.py counts the inventory's), no call record (no viewer follows the log)
    assert channels.counts == {} and grown["spublish"] == 1 and grown["publish"] == 0, channels.counts
    # no directory look-up, no script about this view: nothing is renewed (other views' releases may fall in here)
    key = view_digest(str(data["view"]))
    assert channels.commands and not [command for command in channels.commands if key in command]


async def test_a_forwarded_call_whose_caller_asked_for_no_progress_sends_no_progress_reports(
    workers: tuple[RunningServer, RunningServer], page: Page, redis_server: RedisServer
) -> None:
    one, two = workers
    async with connect(one, token="quiet-token") as agent:
        data = await open_on(agent, page, two, "Quiet")
        async with watch_channels(redis_server.url) as channels:
            counted = await agent.call_tool("counter_count_to", {"n": 3, "_view": data["view"]})
            assert texts(counted) == ["counted to 3"]
            await channels.settled()
    assert channels.counts["inbox"] == 2, channels.counts  # the request and the reply, no report in between
    assert channels.counts["ack"] == 0, channels.counts  # a quick call's reply is its own sign of life


async def test_without_redis_local_views_work_and_remote_calls_fail_at_once_then_recover(
    workers: tuple[RunningServer, RunningServer], page: Page, redis_server: RedisServer
) -> None:
    one, two = workers
    async with connect(one, token="redis-token") as agent:
        remote = await open_on(agent, page, two, "Remote")
        local_tab = await page.context.new_page()
        local = structured(await agent.call_tool("notes", {"text": "local"}))
        await local_tab.goto(str(local["url"]))
        await expect(local_tab.get_by_test_id("note")).to_have_text("local")
        redis_server.stop()
        try:
            appended = await agent.call_tool("notes_append", {"line": "still here", "_view": local["view"]})
            assert texts(appended) == ["local | still here"]
            started = time.monotonic()
            failed = await agent.call_tool("counter_increment", {"_view": remote["view"]})
            assert failed.is_error and 'code="BRIDGE_UNAVAILABLE"' in texts(failed)[0]
            assert time.monotonic() - started < 20  # the call timeout: it failed at once, never waited that out
            assert "Retry in a few seconds with the same _call_id." in texts(failed)[0]
        finally:
            redis_server.start()
        for worker in workers:  # both inboxes are back (and have written their directory entries again)
            worker.wait_for_output(r"worker w\d subscribed again", timeout=15)
        assert structured(await agent.call_tool("counter_increment", {"_view": remote["view"]})) == {"count": 1}
        await expect(page.get_by_test_id("count")).to_have_text("1")
        await local_tab.close()


async def test_a_starting_worker_leaves_the_views_of_the_others_live(
    workers: tuple[RunningServer, RunningServer], page: Page, redis_server: RedisServer, shared_db: Path
) -> None:
    one, two = workers
    async with connect(one, token="start-token") as agent:
        data = await open_on(agent, page, two, "Stays")
        with contextlib.ExitStack() as stack:
            three = await start_worker(stack, "w3", redis_server.url, *SETTINGS, db=shared_db, app=COUNTER_APP)
            assert stored(shared_db, data["view"]) == ("live", "w2")
            async with connect(three, token="start-token") as elsewhere:
                bumped = await elsewhere.call_tool("counter_increment", {"by": 2, "_view": data["view"]})
                assert structured(bumped) == {"count": 2}
        await expect(page.get_by_test_id("count")).to_have_text("2")
        assert stored(shared_db, data["view"]) == ("live", "w2")


async def test_a_worker_stopped_with_sigterm_releases_the_leases_of_its_views_without_a_traceback(
    workers: tuple[RunningServer, RunningServer], page: Page, redis_server: RedisServer, shared_db: Path
) -> None:
    import redis.asyncio as aioredis

    one, _ = workers
    client = aioredis.Redis.from_url(redis_server.url)
    try:
        async with connect(one, token="drain-token") as agent:
            with contextlib.ExitStack() as stack:
                three = await start_worker(stack, "w3", redis_server.url, *SETTINGS, db=shared_db, app=COUNTER_APP)
                data = await open_on(agent, page, three, "Leaving")
                lease = f"wv:{{{view_digest(str(data['view']))}}}:own"
                assert str(await client.get(lease)).startswith("b'w3|")
                assert await client.get(heartbeat_key("w3")) is not None
                three.process.send_signal(signal.SIGTERM)
                stopped = await asyncio.to_thread(three.process.wait, 20)
                assert stopped in (0, -signal.SIGTERM)  # uvicorn ends with the signal once it has shut down
                assert await client.get(lease) is None  # released at once: a directory entry never expires
                assert await client.get(heartbeat_key("w3")) is None  # its callers learn at once, not in 3 s
                assert "Traceback" not in three.output
            unavailable = await agent.call_tool("counter_increment", {"_view": data["view"]})
            assert unavailable.is_error  # nobody holds the view's tab now: a clear error, not a wait
    finally:
        await client.aclose()


async def test_a_view_that_moves_is_followed_and_the_old_workers_late_close_does_not_unbind_it(
    workers: tuple[RunningServer, RunningServer], page: Page, shared_db: Path
) -> None:
    one, two = workers
    async with connect(two, token="move-token") as agent:
        data = await open_on(agent, page, two, "Moving")
        assert structured(await agent.call_tool("counter_increment", {"_view": data["view"]})) == {"count": 1}
        await page.goto(on_worker(str(data["url"]), one))  # the reload lands on the other worker
        await expect(page.get_by_test_id("count")).to_have_text("1")
        assert stored(shared_db, data["view"]) == ("live", "w1")
        assert structured(await agent.call_tool("counter_increment", {"_view": data["view"]})) == {"count": 2}
        await expect(page.get_by_test_id("count")).to_have_text("2")
        key = str(data["url"]).rsplit("key=", 1)[1]
        assert texts(await agent.call_tool("wait_deleted", {"key": key})) == ["1 deleted"]  # the old tab, on w2
        assert stored(shared_db, data["view"]) == ("live", "w1")
        assert structured(await agent.call_tool("counter_increment", {"_view": data["view"]})) == {"count": 3}
    await expect(page.get_by_test_id("count")).to_have_text("3")


async def test_principals_stay_apart_across_workers_and_the_owner_checks_again(
    workers: tuple[RunningServer, RunningServer], page: Page, redis_server: RedisServer
) -> None:
    one, two = workers
    async with connect(one, token=ALICE) as alice, connect(one, token=BOB) as bob:
        data = await open_on(alice, page, two, "Alice's")
        stolen = await bob.call_tool("counter_increment", {"_view": data["view"]})
        assert stolen.is_error and 'code="VIEW_UNKNOWN"' in texts(stolen)[0]
        assert (await bob.call_tool("counter_increment", {})).is_error  # routing finds none of Alice's views
        forged = await ask_worker(redis_server, "w2", data["view"], principal="bob")
        assert forged["result"]["isError"] is True and 'code="VIEW_UNKNOWN"' in forged["result"]["content"][0]["text"]
        honest = await ask_worker(redis_server, "w2", data["view"], principal="alice")
        assert honest["result"]["structuredContent"] == {"count": 1}
    await expect(page.get_by_test_id("count")).to_have_text("1")


async def ask_worker(redis_server: RedisServer, worker: str, handle: str, *, principal: str) -> dict[str, Any]:
    """Send `worker` a forwarded `counter_increment` for the view as `principal` would, straight through Redis."""

    async def unused(body: Any, report_progress: Any, send_log: Any) -> dict[str, Any]:
        raise AssertionError("the probe is asked nothing")

    engine = Engine(redis_server.url, connect_timeout=1)
    probe = Inbox(engine, Leases(engine.client, "probe"), unused)
    await probe.start()
    try:
        body = {
            "target": view_digest(handle),
            "tool": "counter_increment",
            "arguments": {},
            "caller": [principal, None, "2026-07-28"],
        }
        return await probe.request(worker, body, 10)
    finally:
        await probe.stop()
        await engine.aclose()
