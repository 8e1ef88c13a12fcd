"""App events: delivery on the subscriber's loop after publication, in order, once decoded, held during a call."""

from __future__ import annotations

import asyncio
import math
import threading

import pytest

from webapp import AppEvents, Event, JsonValue


async def _turns(count: int = 10) -> None:
    """Let the loop run `count` turns (each callback scheduled by the previous one)."""
    done = asyncio.get_running_loop().create_future()

    def hop(left: int) -> None:
        if left:
            asyncio.get_running_loop().call_soon(hop, left - 1)
        else:
            done.set_result(None)

    hop(count)
    await done


class _Inbox:
    def __init__(self, expected: int = 1) -> None:
        self.events: list[Event] = []
        self.threads: set[int] = set()
        self.expected = expected
        self.full = asyncio.Event()

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        self.threads.add(threading.get_ident())
        if len(self.events) >= self.expected:
            self.full.set()

    async def wait(self) -> list[Event]:
        async with asyncio.timeout(5):
            await self.full.wait()
        return self.events


async def test_subscribers_of_a_topic_get_its_events_in_order_after_the_publisher_returns() -> None:
    events = AppEvents()
    first, second, other = _Inbox(2), _Inbox(2), _Inbox()
    events.subscribe("stock/BER", first)
    events.subscribe("stock/BER", second)
    events.subscribe("stock/HAM", other)
    assert events.publish("stock/BER", {"n": 1}) == 2
    assert events.publish("stock/BER", {"n": 2}) == 2
    assert first.events == []  # never delivered inside publish
    assert [e.payload for e in await first.wait()] == [{"n": 1}, {"n": 2}]
    assert [e.payload for e in await second.wait()] == [{"n": 1}, {"n": 2}]
    assert first.events[0].payload is second.events[0].payload  # decoded once, shared
    await _turns()
    assert other.events == []
    assert events.publish("stock/MUC", [1, 2]) == 0


async def test_a_payload_that_is_not_json_is_refused_and_nothing_is_delivered() -> None:
    events = AppEvents()
    inbox = _Inbox()
    events.subscribe("t", inbox)
    with pytest.raises(TypeError):
        events.publish("t", {"when": object()})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        events.publish("t", math.nan)
    events.publish("t", "fine")
    assert [e.payload for e in await inbox.wait()] == ["fine"]


async def test_events_published_in_another_thread_are_delivered_on_the_subscribers_loop() -> None:
    events = AppEvents()
    inbox = _Inbox()
    events.subscribe("t", inbox)
    publisher = threading.Thread(target=events.publish, args=("t", {"from": "thread"}))
    publisher.start()
    publisher.join()
    assert [e.payload for e in await inbox.wait()] == [{"from": "thread"}]
    assert inbox.threads == {threading.get_ident()}


async def test_a_failing_or_async_handler_does_not_keep_the_event_from_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    events = AppEvents()
    inbox, later = _Inbox(), asyncio.Event()

    def broken(event: Event) -> None:
        raise RuntimeError("a subscriber bug")

    async def slow(event: Event) -> None:
        await _turns(1)
        later.set()

    events.subscribe("t", broken)
    events.subscribe("t", slow)
    events.subscribe("t", inbox)
    events.publish("t", 1)
    await inbox.wait()
    async with asyncio.timeout(5):
        await later.wait()
    assert "an app event handler of 't' failed" in caplog.text


async def test_a_closed_subscription_gets_nothing_more_and_leaves_the_topic() -> None:
    events = AppEvents()
    inbox, kept = _Inbox(), _Inbox(2)
    subscription = events.subscribe("t", inbox)
    events.subscribe("t", kept)
    events.publish("t", 1)
    subscription.close()
    subscription.close()
    events.publish("t", 2)
    assert [e.payload for e in await kept.wait()] == [1, 2]
    assert inbox.events == [] and events.subscribers("t") == 1


async def test_deliveries_wait_while_held_and_a_subscriber_may_take_its_own_at_once() -> None:
    events = AppEvents()
    watcher, actor = _Inbox(), _Inbox()
    events.subscribe("t", watcher)
    mine = events.subscribe("t", actor)
    with events.hold():
        events.publish("t", "change")
        await _turns()
        assert watcher.events == [] and actor.events == []
        mine.deliver_now()  # the acting view shows its own change before its call returns
        assert [e.payload for e in actor.events] == ["change"]
    assert [e.payload for e in await watcher.wait()] == ["change"]
    await _turns()
    assert len(actor.events) == 1  # not delivered twice


async def test_a_hold_that_is_never_released_delays_deliveries_only_for_a_while() -> None:
    events = AppEvents()
    inbox = _Inbox()
    events.subscribe("t", inbox)
    with events.hold():
        events.publish("t", "change")
        assert [e.payload for e in await inbox.wait()] == ["change"]


async def test_subscribers_that_come_and_go_during_a_delivery_get_each_later_event_once_and_in_order() -> None:
    events = AppEvents()
    inboxes = [_Inbox(2) for _ in range(40)]
    for inbox in inboxes:
        events.subscribe("t", inbox)
    last = events.subscribe("t", gone := _Inbox())
    events.publish("t", 1)
    await _turns(10)  # one subscriber per loop turn: the first few have it
    assert 0 < sum(bool(inbox.events) for inbox in inboxes) < len(inboxes)
    late = _Inbox()
    events.subscribe("t", late)
    last.close()
    events.publish("t", 2)
    for inbox in inboxes:
        assert [e.payload for e in await inbox.wait()] == [1, 2]
    assert [e.payload for e in await late.wait()] == [2]
    await _turns(100)
    assert all(len(inbox.events) == 2 for inbox in inboxes) and len(late.events) == 1 and gone.events == []
    assert events.subscribers("t") == 41


class _Batches:
    """A batch subscriber's inbox: the payloads of each batch it got."""

    def __init__(self, expected: int = 1) -> None:
        self.batches: list[list[JsonValue]] = []
        self.expected = expected
        self.full = asyncio.Event()

    def __call__(self, batch: tuple[Event, ...]) -> None:
        self.batches.append([event.payload for event in batch])
        if sum(len(payloads) for payloads in self.batches) >= self.expected:
            self.full.set()

    async def wait(self) -> list[list[JsonValue]]:
        async with asyncio.timeout(5):
            await self.full.wait()
        return self.batches


async def test_a_burst_reaches_a_batch_subscriber_as_its_first_event_at_once_and_the_rest_in_one_batch() -> None:
    events = AppEvents(coalesce=0.3)
    batches, plain = _Batches(100), _Inbox(100)
    events.subscribe_batches("t", batches)
    events.subscribe("t", plain)  # plain subscribers of the same topic are not paced
    events.publish("t", 0)
    async with asyncio.timeout(5):  # the first after a quiet interval: at once
        while not batches.batches:
            await _turns(1)
    for number in range(1, 100):
        events.publish("t", number)
    assert [e.payload for e in await plain.wait()] == list(range(100))
    assert batches.batches == [[0]]  # the others wait for the interval's end
    assert await batches.wait() == [[0], list(range(1, 100))]
    assert (events.delivered, events.coalesced) == (200, 98)


async def test_a_batch_subscriber_takes_what_waits_at_once_and_a_closed_one_gets_nothing_more() -> None:
    events = AppEvents(coalesce=60.0)  # the interval never ends within the test
    acting, watching, gone = _Batches(2), _Batches(), _Batches()
    mine = events.subscribe_batches("t", acting)
    events.subscribe_batches("t", watching)
    closed = events.subscribe_batches("t", gone)
    events.publish("t", "first")
    assert await watching.wait() == [["first"]] and await gone.wait() == [["first"]]
    closed.close()
    events.publish("t", "own change")
    events.publish("t", "another")
    await _turns(20)
    assert watching.batches == [["first"]] and gone.batches == [["first"]]
    mine.deliver_now()  # the acting view: its own change is never delayed
    assert acting.batches == [["first"], ["own change", "another"]]
    assert events.subscribers("t") == 2


async def test_without_coalescing_a_batch_subscriber_gets_each_event_as_it_comes() -> None:
    events = AppEvents(coalesce=0.0)
    batches = _Batches(3)
    events.subscribe_batches("t", batches)
    for number in range(3):
        events.publish("t", number)
        async with asyncio.timeout(5):
            while len(batches.batches) <= number:
                await _turns(1)
    assert batches.batches == [[0], [1], [2]]
