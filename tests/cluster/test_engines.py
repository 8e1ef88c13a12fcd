"""The real `webapp.cluster` classes against the Redis engines operators run — a 3-master Redis Cluster, a master
found through Sentinel, a TLS-only Redis: directory entries and heartbeats, request-reply between inboxes (a gone
owner answered at once by the exact receiver count of its channel's slot node) and app events between workers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from redis.asyncio.cluster import RedisCluster

from tests.cluster.conftest import Engines
from webapp import AppEvents, Event
from webapp.bridge import view_digest
from webapp.cluster import (
    EVENTS_CHANNEL,
    HEARTBEAT_TTL,
    Engine,
    EventRelay,
    Inbox,
    Lease,
    Leases,
    OwnerGone,
    Unacknowledged,
    heartbeat_key,
    inbox_channel,
)
from webapp.core import ProgressReporter
from webapp.core.context import LogSender

TIMEOUT = 10.0  # a request's deadline: every failure below comes long before it
KINDS = ["cluster", "sentinel", "tls"]


def url_of(engines: Engines, kind: str) -> str:
    return {"cluster": engines.cluster.url, "sentinel": engines.sentinel.url, "tls": engines.tls.url}[kind]


@dataclass
class Worker:
    engine: Engine
    leases: Leases
    inbox: Inbox
    events: AppEvents
    relay: EventRelay


@pytest_asyncio.fixture(params=KINDS)
async def pair(request: pytest.FixtureRequest, engines: Engines) -> AsyncIterator[tuple[Worker, Worker]]:
    """Workers w1 and w2 on one engine, wired as `Node` wires them; w2 answers `echo` and reports progress."""
    url = url_of(engines, request.param)

    async def handle(
        body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None
    ) -> dict[str, Any]:
        if report_progress is not None:
            for step in (1, 2):
                await report_progress(step, 2, f"step {step}")
        if body.get("op") == "hold":
            await asyncio.Event().wait()  # until the owner stops
        return {"echo": body.get("text")}

    made: list[Worker] = []
    for name in ("w1", "w2"):
        engine = Engine(url, connect_timeout=2)
        leases, events = Leases(engine.client, name), AppEvents()
        relay = EventRelay(engine.client, name, events)
        inbox = Inbox(engine, leases, handle, channels=relay.channels)
        relay.start()
        await inbox.start()
        made.append(Worker(engine, leases, inbox, events, relay))
    try:
        yield made[0], made[1]
    finally:
        for worker in made:
            await worker.relay.stop()
            await worker.inbox.stop()
            await worker.engine.aclose()


async def test_on_a_redis_cluster_the_inboxes_of_two_workers_and_the_events_live_on_their_own_slot_nodes(
    engines: Engines,
) -> None:
    engine = Engine(engines.cluster.url, connect_timeout=2)
    try:
        client = engine.client
        assert isinstance(client, RedisCluster) and engine.sharded
        await client.initialize()
        nodes = {str(client.get_node_from_key(channel)) for channel in (inbox_channel("w1"), inbox_channel("w2"))}
        assert len(nodes) == 2  # (w1's and w2's inboxes hash to slots of different masters: every test below
        # sends a request and its reply across nodes)
        key = view_digest("a view")
        assert len({client.keyslot(f"wv:{{{key}}}:{kind}") for kind in ("own", "epoch")}) == 1  # one-slot script
        beats = {client.keyslot(heartbeat_key(name)) for name in ("w1", "w2", "w3")}
        assert len(beats) == 1  # every heartbeat in one MGET
        groups = await engine.subscriptions([inbox_channel("w1"), inbox_channel("w2"), EVENTS_CHANNEL])
        assert sorted(len(channels) for _, channels in groups) in ([1, 1, 1], [1, 2])
    finally:
        await engine.aclose()


async def test_directory_entries_and_heartbeats_work_on_every_engine(pair: tuple[Worker, Worker]) -> None:
    one, two = pair
    key = view_digest(f"view on {one.engine.target.kind} {time.monotonic()}")
    first = await one.leases.claim(key)
    assert await two.leases.owner(key) == first and first.worker == "w1"
    moved = await two.leases.claim(key)
    assert moved == Lease("w2", first.epoch + 1)
    assert await one.leases.reassert() == [key] and await one.leases.release(key) is False
    assert await two.leases.release(key) is True and await one.leases.owner(key) is None
    assert await one.leases.alive(["w1", "w2", "w9"]) == {"w1", "w2"}  # both inboxes listen, so both beat


async def test_a_request_and_its_progress_cross_workers_on_every_engine(pair: tuple[Worker, Worker]) -> None:
    one, _ = pair
    reported: list[tuple[float, float | None, str | None]] = []

    async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
        reported.append((progress, total, message))

    replies = await asyncio.gather(*(one.inbox.request("w2", {"text": f"t{n}"}, TIMEOUT) for n in range(10)))
    assert replies == [{"echo": f"t{n}"} for n in range(10)]
    assert await one.inbox.request("w2", {"text": "p"}, TIMEOUT, progress=report) == {"echo": "p"}
    assert reported == [(1, 2, "step 1"), (2, 2, "step 2")]


async def test_a_request_to_a_stopped_owner_fails_within_100_ms_by_the_exact_receiver_count(
    pair: tuple[Worker, Worker],
) -> None:
    one, two = pair
    assert await one.inbox.listening("w2")
    await two.inbox.stop()
    started = time.monotonic()
    with pytest.raises(OwnerGone):
        await one.inbox.request("w2", {"text": "x"}, TIMEOUT)
    assert time.monotonic() - started < 0.1
    assert not await one.inbox.listening("w2")


@pytest.mark.parametrize("pair", ["cluster"], indirect=True)  # the TTL waited out once (tests/cluster/test_inbox.py
async def test_a_request_held_by_an_owner_killed_meanwhile_fails_once_its_heartbeat_expires(  # does on one Redis)
    pair: tuple[Worker, Worker],
) -> None:
    one, two = pair
    asking = asyncio.create_task(one.inbox.request("w2", {"op": "hold"}, TIMEOUT))
    await asyncio.sleep(0.05)  # the request reaches w2, which holds it
    await two.inbox.stop()
    killed = time.monotonic()  # as a killed worker: its last heartbeat lives on until its TTL runs out
    await one.engine.client.set(heartbeat_key("w2"), b"1", px=int(HEARTBEAT_TTL * 1000))
    with pytest.raises((OwnerGone, Unacknowledged)):  # gone, or killed before it acknowledged the request
        await asking
    assert time.monotonic() - killed < HEARTBEAT_TTL + 1 < TIMEOUT


async def test_app_events_reach_the_other_worker_once_on_every_engine(pair: tuple[Worker, Worker]) -> None:
    one, two = pair
    seen: list[Event] = []
    arrived = asyncio.Event()

    def received(event: Event) -> None:
        seen.append(event)
        arrived.set()

    two.events.subscribe("stock/BER", received)
    one.events.publish("stock/BER", {"sku": "A-1", "on_hand": 7})
    async with asyncio.timeout(5):
        await arrived.wait()
    assert [event.payload for event in seen] == [{"sku": "A-1", "on_hand": 7}]
