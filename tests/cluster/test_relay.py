"""App events between two workers through a real Redis: the events of one loop turn go out as one SPUBLISH (one
frame, compressed when large), paced by the workers reading them, and reach the other worker's subscribers in order with
the same text; the publisher ignores its echo; without Redis local delivery goes on, warned about once, and the other
worker gets the events again once Redis is back; events dropped beyond the backlog of a slow Redis owe the other workers
a resync."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest_asyncio
import redis.asyncio as aioredis

from tests.support.cluster import command_counts
from tests.support.fault_proxy import FaultProxy
from tests.support.redis import RedisServer
from webapp import AppEvents, Event, JsonValue
from webapp.cluster import EVENTS_CHANNEL, Engine, EventRelay, Inbox, Leases
from webapp.cluster.relay import LONGEST_WINDOW, frame, read_frame
from webapp.events import RESYNC

WAIT = 15.0  # seconds, for anything below (an inbox subscribes again within about a second of Redis coming back)


class Seen:
    """What one subscriber received; `wait(n)` until it has n events."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = asyncio.Event()

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()

    async def wait(self, count: int) -> list[Event]:
        async with asyncio.timeout(WAIT):
            while len(self.events) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.events


class Records(logging.Handler):
    """The relay's log records; `dropped(n)` until n events were dropped (a line says how many went in one frame)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._changed = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self._changed.set()

    def at(self, level: int) -> list[str]:
        return [record.getMessage() for record in self.records if record.levelno == level]

    async def dropped(self, count: int) -> None:
        async with asyncio.timeout(WAIT):
            while sum(int(m.split()[0]) for m in self.at(logging.DEBUG) if "reached no other worker" in m) < count:
                self._changed.clear()
                await self._changed.wait()


@dataclass
class Worker:
    events: AppEvents
    relay: EventRelay
    inbox: Inbox
    resubscribed: asyncio.Event


@pytest_asyncio.fixture
async def workers(redis_db: str) -> AsyncIterator[tuple[Worker, Worker]]:
    """Workers w1 and w2, each with its app events relayed through its inbox's subscription (as `Node` wires it)."""

    async def unused(body: Mapping[str, Any], report_progress: Any, send_log: Any) -> dict[str, Any]:
        raise AssertionError("no worker is asked anything here")

    engines = [Engine(redis_db, connect_timeout=1) for _ in "12"]
    made: list[Worker] = []
    for engine, name in zip(engines, ("w1", "w2"), strict=True):
        events, resubscribed = AppEvents(), asyncio.Event()

        async def again(resubscribed: asyncio.Event = resubscribed) -> None:
            resubscribed.set()

        relay = EventRelay(engine.client, name, events)
        inbox = Inbox(engine, Leases(engine.client, name), unused, on_subscribed=again, channels=relay.channels)
        relay.start()
        await inbox.start()
        made.append(Worker(events, relay, inbox, resubscribed))
    try:
        yield made[0], made[1]
    finally:
        for worker in made:
            await worker.relay.stop()
            await worker.inbox.stop()
        for engine in engines:
            await engine.aclose()


async def test_an_event_from_any_thread_reaches_the_other_worker_once_and_the_publisher_ignores_its_echo(
    workers: tuple[Worker, Worker],
) -> None:
    one, two = workers
    here, there = Seen(), Seen()
    one.events.subscribe("stock/BER", here)
    two.events.subscribe("stock/BER", there)
    assert one.events.watched("stock/HAM")  # a view on any worker may watch it: the relay is attached
    assert await asyncio.to_thread(one.events.publish, "stock/BER", {"sku": "A-1", "on_hand": 7}) == 1
    (first,) = await there.wait(1)
    assert first.topic == "stock/BER" and first.payload == {"sku": "A-1", "on_hand": 7}
    assert first.text == here.events[0].text  # the text as published: encoded once, decoded once per worker
    two.events.publish("stock/BER", {"sku": "A-1", "on_hand": 5})
    # w1 gets w2's event, and none of its own in between: its echo came first and was ignored
    assert [event.payload for event in await here.wait(2)] == [first.payload, {"sku": "A-1", "on_hand": 5}]
    await one.relay.stop()
    assert not one.events.watched("stock/HAM") and one.events.watched("stock/BER")


async def test_the_events_of_one_loop_turn_go_out_in_one_compressed_frame_and_arrive_in_order(
    workers: tuple[Worker, Worker], redis_server: RedisServer
) -> None:
    one, two = workers
    there, calls = Seen(), Seen()
    two.events.subscribe("stock/BER", there)
    two.events.subscribe("webapp/calls", calls)
    name = "Hex bolt M8×40, zinc plated, box of 100"
    rows: list[JsonValue] = [{"sku": f"A-{number}", "name": name, "on_hand": number} for number in range(20)]
    before = command_counts(redis_server.port).get("spublish", 0)
    for number in range(3):  # one loop turn: a transfer's two warehouses and the call's record, say
        one.events.publish("stock/BER", {"version": number, "rows": rows})
    one.events.publish("webapp/calls", {"seq": 1})
    assert [event.payload for event in await there.wait(3)] == [{"version": n, "rows": rows} for n in range(3)]
    assert [event.payload for event in await calls.wait(1)] == [{"seq": 1}]
    assert command_counts(redis_server.port)["spublish"] - before == 1
    packed = frame("w1", [Event("stock/BER", json.dumps({"rows": rows}))])
    assert packed.partition(b"\n")[0] == b'["w1",["stock/BER"],"z"]' and len(packed) < len(json.dumps(rows)) / 3
    worker, (event,) = read_frame(packed)
    assert (worker, event.topic, event.payload) == ("w1", "stock/BER", {"rows": rows})
    assert read_frame(packed, unless_from="w1") == ("w1", [])  # its own frame: left unread


async def test_a_worker_paces_its_frames_by_the_workers_reading_them_the_first_after_a_quiet_window_at_once(
    workers: tuple[Worker, Worker], redis_server: RedisServer
) -> None:
    one, two = workers
    there = Seen()
    two.events.subscribe("stock/BER", there)
    one.relay.budget = 16.0  # deliveries a second for the two workers together
    before = command_counts(redis_server.port).get("spublish", 0)
    one.events.publish("stock/BER", {"n": 0})
    await there.wait(1)
    assert one.relay.readers == 2 and one.relay.window == 0.25  # 2² / 16: as the frame's reply counted the readers
    one.relay.budget = 1.0  # 2² / 1 s, longer than a worker's events ever wait
    assert one.relay.window == LONGEST_WINDOW
    for number in range(1, 4):  # three loop turns within the window: held, then sent together
        one.events.publish("stock/BER", {"n": number})
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    assert len(there.events) == 1
    assert [event.payload for event in await there.wait(4)] == [{"n": n} for n in range(4)]
    assert command_counts(redis_server.port)["spublish"] - before == 2
    assert two.relay.frames == 2 and two.relay.received == 4
    one.events.publish("stock/BER", {"n": 4})  # within the next window: held, but a stopping worker sends it
    await one.relay.stop()
    assert [event.payload for event in await there.wait(5)][-1] == {"n": 4}


async def test_a_frame_nobody_can_read_is_dropped_and_the_next_event_still_arrives(
    workers: tuple[Worker, Worker], redis_db: str
) -> None:
    one, two = workers
    there = Seen()
    two.events.subscribe("stock/BER", there)
    client = aioredis.Redis.from_url(redis_db)
    try:
        await client.spublish(EVENTS_CHANNEL, b"\xff not a frame")
    finally:
        await client.aclose()
    one.events.publish("stock/BER", {"n": 1})
    assert [event.payload for event in await there.wait(1)] == [{"n": 1}]


async def test_without_redis_local_delivery_goes_on_warned_once_and_the_other_worker_gets_events_once_it_is_back(
    workers: tuple[Worker, Worker], redis_server: RedisServer
) -> None:
    one, two = workers
    here, there = Seen(), Seen()
    one.events.subscribe("stock/BER", here)
    two.events.subscribe("stock/BER", there)
    records = Records()
    logger = logging.getLogger("webapp.cluster.relay")
    logger.addHandler(records)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        redis_server.stop()
        try:
            for number in range(5):
                assert one.events.publish("stock/BER", {"n": number}) == 1  # no exception in the publisher
            assert [event.payload for event in await here.wait(5)] == [{"n": n} for n in range(5)]
            await records.dropped(5)
            assert len(records.at(logging.WARNING)) == 1, records.at(logging.WARNING)  # not once per event
        finally:
            redis_server.start()
        async with asyncio.timeout(WAIT):
            await one.resubscribed.wait()
            await two.resubscribed.wait()
        one.events.publish("stock/BER", {"n": "back"})
        assert [event.payload for event in await there.wait(1)] == [{"n": "back"}]  # the lost ones stay lost
        assert len(records.at(logging.INFO)) == 1 and len(records.at(logging.WARNING)) == 1
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
        if redis_server.process is None:
            redis_server.start()


async def test_events_dropped_beyond_the_backlog_of_a_slow_redis_owe_the_other_workers_a_resync(
    redis_server: RedisServer, redis_db: str
) -> None:
    async def unused(body: Mapping[str, Any], report_progress: Any, send_log: Any) -> dict[str, Any]:
        raise AssertionError("no worker is asked anything here")

    with FaultProxy(redis_server.port) as proxy:
        slow, fast = Engine(proxy.url, connect_timeout=1), Engine(redis_db, connect_timeout=1)
        one, two = AppEvents(), AppEvents()
        relays = [EventRelay(slow.client, "w1", one), EventRelay(fast.client, "w2", two)]
        inboxes = [
            Inbox(engine, Leases(engine.client, name), unused, channels=relay.channels)
            for engine, name, relay in zip((slow, fast), ("w1", "w2"), relays, strict=True)
        ]
        for relay, inbox in zip(relays, inboxes, strict=True):
            relay.start()
            await inbox.start()
        there, told = Seen(), Seen()
        two.subscribe("stock/BER", there)
        two.subscribe(RESYNC, told)
        try:
            proxy.delay(0.2)  # each frame takes 0.2 s: slow, not late (a late frame owes a resync of its own)
            for number in range(1100):  # one loop turn: more than the 1,000 that may wait for Redis
                one.publish("stock/BER", {"n": number})
            await asyncio.sleep(0)  # the relay takes them (handed over with `call_soon`)
            assert relays[0].owes_resync
            await told.wait(1)  # once the backlog is out: the views there read anew
            assert 1000 <= len(there.events) < 1100
        finally:
            proxy.heal()
            for relay, inbox in zip(relays, inboxes, strict=True):
                await relay.stop()
                await inbox.stop()
            for engine in (slow, fast):
                await engine.aclose()
