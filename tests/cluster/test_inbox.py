"""Request-reply between two workers through a real Redis over sharded pub/sub: answers, deadlines; a gone owner and
a gone Redis fail at once (a killed owner mid-request: once its heartbeat expires) rather than at the timeout."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
import pytest_asyncio

from tests.support.cluster import command_counts
from tests.support.redis import RedisServer
from webapp.cluster import (
    HEARTBEAT_TTL,
    ClusterUnavailable,
    Engine,
    Inbox,
    Leases,
    OwnerGone,
    RequestTimeout,
    heartbeat_key,
)
from webapp.core import ProgressReporter
from webapp.core.context import LogSender

TIMEOUT = 10.0  # a call's deadline: every failure below must come long before it


@pytest_asyncio.fixture
async def workers(redis_db: str) -> AsyncIterator[tuple[Inbox, Inbox, asyncio.Event]]:
    """Worker w1 asks, worker w2 answers (`echo`), or holds the request until the event is set (`hold`)."""
    release = asyncio.Event()

    async def handle(
        body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None
    ) -> dict[str, Any]:
        if body.get("op") == "report then hold":
            assert report_progress is not None
            await report_progress(1, 2, "holding")
        if body.get("op") in ("hold", "report then hold"):
            await release.wait()
        if body.get("op") == "count":
            assert report_progress is not None
            for step in (1, 2, 3):
                await report_progress(step, 3, f"step {step}")
        if body.get("op") == "log":
            assert send_log is not None
            for level in ("debug", "info", "warning"):
                await send_log(level, {"said": level}, "owner")
                if report_progress is not None:
                    await report_progress(1, None, level)
        return {"echo": body.get("text"), "by": "w2", "asked for progress": report_progress is not None}

    async def unused(
        body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None
    ) -> dict[str, Any]:
        raise AssertionError("w1 is asked nothing")

    engines = [Engine(redis_db, connect_timeout=1) for _ in "12"]
    leases = [Leases(engine.client, worker) for engine, worker in zip(engines, ("w1", "w2"), strict=True)]
    one, two = Inbox(engines[0], leases[0], unused), Inbox(engines[1], leases[1], handle)
    for worker in (one, two):
        await worker.start()
    try:
        yield one, two, release
    finally:
        release.set()
        for worker in (one, two):
            await worker.stop()
        for engine in engines:
            await engine.aclose()


async def test_a_request_reaches_the_owner_and_its_reply_comes_back(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, _, _ = workers
    replies = await asyncio.gather(*(one.request("w2", {"text": f"t{n}"}, TIMEOUT) for n in range(20)))
    assert replies == [{"echo": f"t{n}", "by": "w2", "asked for progress": False} for n in range(20)]


async def test_the_owners_progress_reports_reach_the_caller_in_order_before_the_reply(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, _, _ = workers
    reported: dict[str, list[tuple[float, float | None, str | None]]] = {"a": [], "b": []}

    def reporter(name: str) -> ProgressReporter:
        async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
            await asyncio.sleep(0.01)  # a slow caller: the reports still arrive in order, all before the reply
            reported[name].append((progress, total, message))

        return report

    replies = await asyncio.gather(
        *(one.request("w2", {"op": "count", "text": name}, TIMEOUT, progress=reporter(name)) for name in "ab")
    )
    assert replies == [{"echo": name, "by": "w2", "asked for progress": True} for name in "ab"]
    assert reported["a"] == reported["b"] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_the_owners_log_messages_of_the_callers_level_reach_it_in_order_with_the_reports_before_the_reply(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, _, _ = workers
    heard: list[tuple[str, Any]] = []

    async def send_log(level: str, data: Any, logger: str | None = None) -> None:
        await asyncio.sleep(0.01)  # a slow client: still in order, all before the reply
        heard.append((level, data))

    async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
        heard.append(("progress", message))

    asked = {"op": "log", "text": "l"}
    reply = await one.request("w2", asked, TIMEOUT, progress=report, logs=("info", send_log))  # debug never travels
    assert reply == {"echo": "l", "by": "w2", "asked for progress": True}
    said = [("progress", "debug"), ("info", {"said": "info"}), ("progress", "info"), ("warning", {"said": "warning"})]
    assert heard == [*said, ("progress", "warning")]


async def test_a_request_to_a_worker_nobody_listens_for_fails_at_once(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, two, _ = workers
    await two.stop()
    started = time.monotonic()
    with pytest.raises(OwnerGone):
        await one.request("w2", {"text": "x"}, TIMEOUT)
    assert time.monotonic() - started < TIMEOUT / 10


async def test_an_owner_that_does_not_answer_in_time_times_out_and_its_late_reply_is_dropped(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, _, release = workers
    with pytest.raises(RequestTimeout):
        await one.request("w2", {"op": "hold"}, 0.3)
    release.set()
    assert (await one.request("w2", {"text": "next"}, TIMEOUT))["echo"] == "next"


async def test_without_redis_a_request_fails_at_once_with_cluster_unavailable(
    workers: tuple[Inbox, Inbox, asyncio.Event], redis_server: RedisServer
) -> None:
    one, _, _ = workers
    redis_server.stop()
    try:
        started = time.monotonic()
        with pytest.raises(ClusterUnavailable):
            await one.request("w2", {"text": "x"}, TIMEOUT)
        assert time.monotonic() - started < TIMEOUT / 10
    finally:
        redis_server.start()


async def test_a_request_while_the_callers_own_inbox_is_not_listening_fails_at_once(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, _, _ = workers
    await one.stop()  # as right after Redis came back, before this worker has subscribed again: no reply reaches it
    started = time.monotonic()
    with pytest.raises(ClusterUnavailable):
        await one.request("w2", {"text": "x"}, TIMEOUT)
    assert time.monotonic() - started < TIMEOUT / 10


async def test_an_owner_that_stops_mid_request_fails_it_at_once(
    workers: tuple[Inbox, Inbox, asyncio.Event],
) -> None:
    one, two, _ = workers
    started = time.monotonic()
    asking = asyncio.create_task(one.request("w2", {"op": "hold"}, TIMEOUT))
    await asyncio.sleep(0)  # let the request go out before the owner goes away
    await two.stop()  # a stopping worker: its heartbeat goes with its subscription
    with pytest.raises(OwnerGone):
        await asking
    assert time.monotonic() - started < TIMEOUT / 10


async def test_an_owner_killed_mid_request_fails_it_once_its_heartbeat_expires(
    workers: tuple[Inbox, Inbox, asyncio.Event], redis_db: str
) -> None:
    one, two, _ = workers
    engine = Engine(redis_db, connect_timeout=1)
    reported = asyncio.Event()

    async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
        reported.set()

    try:
        asking = asyncio.create_task(one.request("w2", {"op": "report then hold"}, TIMEOUT, progress=report))
        async with asyncio.timeout(5):
            await reported.wait()  # the owner runs it: it showed a sign of life before it goes away
        await two.stop()
        killed = time.monotonic()  # as a killed worker: its last heartbeat lives on until its TTL runs out
        await engine.client.set(heartbeat_key("w2"), b"1", px=int(HEARTBEAT_TTL * 1000))
        with pytest.raises(OwnerGone):
            await asking
        assert HEARTBEAT_TTL - 0.5 < time.monotonic() - killed < HEARTBEAT_TTL + 1 < TIMEOUT
    finally:
        await engine.aclose()


async def test_many_requests_held_by_one_worker_share_one_look_at_its_heartbeat(
    workers: tuple[Inbox, Inbox, asyncio.Event], redis_server: RedisServer
) -> None:
    one, _, release = workers
    before = command_counts(redis_server.port).get("mget", 0)
    held = [asyncio.ensure_future(one.request("w2", {"op": "hold", "text": str(n)}, TIMEOUT)) for n in range(50)]
    await asyncio.sleep(1.1)  # about four looks at w2's heartbeat while fifty requests wait for it
    release.set()
    assert len(await asyncio.gather(*held)) == 50
    looks = command_counts(redis_server.port).get("mget", 0) - before
    assert 1 <= looks <= 8, looks  # per look, not per waiting request (fifty would make ~200)
