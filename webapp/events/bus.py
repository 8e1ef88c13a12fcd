"""One server's app events: a publisher never waits for its subscribers, and no subscriber waits for another.

A payload is encoded to JSON text once when published (so a bad payload fails in the publisher, and the same
text travels to the other workers through an attached `Relay`) and decoded at most once, however many subscribers
receive it. It is queued once per event loop, not once per subscriber: each subscription reads on from its own place
in its topic's queue, so a publisher (an acting call) pays the same for one watching view as for a thousand.
Delivery (`webapp.events.delivery`) serves one subscriber per turn of its event loop, and waits while a `hold()` is
active (at most `MAX_HOLD`): the server holds deliveries during a view call and while it answers an MCP request, so
neither the caller's browser round trip nor its response is queued behind every watcher's work. Batch subscribers
(views) are served at most once per `coalesce` seconds, with every event since their last batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from webapp.events.delivery import Channel, Dispatcher, Event, JsonValue

__all__ = ["RESYNC", "AppEvents", "BatchHandler", "Event", "EventHandler", "JsonValue", "Relay", "Subscription"]

log = logging.getLogger(__name__)

RESYNC = "webapp/resync"
"""The topic of an event (payload null) the server delivers when its subscribers may have missed events of other
workers (Redis came back, or stalled while a worker published): subscribers re-read what they show."""


EventHandler = Callable[[Event], object]
"""Called with each event of the subscribed topic on the subscriber's loop; may return an awaitable (run as a task)."""
BatchHandler = Callable[[tuple[Event, ...]], object]
"""Called with the events of the subscribed topic since its last batch, oldest first (never none), on the
subscriber's loop; may return an awaitable (run as a task)."""


class Relay(Protocol):
    """Carries this server's events to the other workers (`webapp.cluster`), which `deliver` them there."""

    def send(self, event: Event) -> None:
        """Take `event` for the other workers; called from any thread, must neither block nor raise."""


class Subscription:
    """One handler of one topic. It reads its topic's events from its own position when its loop's sweep visits it
    (or at once: `deliver_now()`): one by one, or as one batch (`AppEvents.subscribe_batches`)."""

    def __init__(self, events: AppEvents, channel: Channel, handler: EventHandler | BatchHandler, batch: bool) -> None:
        self.topic = channel.topic
        self.position = 0
        """How many of its channel's events came before this subscription's next one (the channel sets it)."""
        self.channel = channel
        """Its topic's queue on its loop."""
        self._events = events
        self._handler = handler
        self._batch = batch
        self._tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks
        self.closed = False

    def deliver_now(self) -> None:
        """Hand every waiting event to the handler at once, in order (e.g. the acting view before its call returns)."""
        if self.closed or not (events := self.channel.take(self)):
            return
        self._events.delivered += len(events)  # on the loop's thread, like every delivery
        if self._batch:
            self._events.coalesced += len(events) - 1
            self._run(events)
        else:
            for event in events:
                if self.closed:
                    return
                self._run(event)

    def _run(self, argument: Event | tuple[Event, ...]) -> None:
        try:
            result = self._handler(argument)  # pyright: ignore[reportArgumentType]  # the kind `_batch` says
            if inspect.isawaitable(result):
                task = self.channel.dispatcher.loop.create_task(_awaited(result, self.topic))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except Exception:  # one subscriber's bug must not hide the event from the others
            log.exception("an app event handler of %r failed", self.topic)

    def close(self) -> None:
        """Stop delivering (events still waiting are dropped); closing twice is harmless."""
        self.closed = True
        self._events.unsubscribe(self)


async def _awaited(result: Any, topic: str) -> None:
    try:
        await result
    except Exception:
        log.exception("an app event handler of %r failed", topic)


class AppEvents:
    """Publish/subscribe by topic. `publish` may be called from any thread; it never runs a handler itself."""

    def __init__(self, *, coalesce: float = 0.0) -> None:
        self.coalesce = coalesce
        """Seconds between two batches of a batch subscriber (`subscribe_batches`); 0: every event at once."""
        self._topics: dict[str, list[Channel]] = {}  # a channel per loop with subscribers of the topic
        self._dispatchers: dict[asyncio.AbstractEventLoop, Dispatcher] = {}
        self._lock = threading.Lock()
        self.relay: Relay | None = None
        """Set while this server is one worker among several: every published event goes to the others too."""
        self.published = 0
        """Events published here since the start (the server's metrics read it)."""
        self.delivered = 0
        """Events handed to a subscriber's handler since the start, one per subscriber (the server's metrics)."""
        self.coalesced = 0
        """Events handed to a batch subscriber together with an earlier one: updates a view was spared (metrics)."""

    def publish(self, topic: str, payload: JsonValue) -> int:
        """Queue `payload` for every subscriber of `topic` here (and hand it to the relay, if any); returns how many
        local subscribers there were. Raises `TypeError` or `ValueError` (and delivers nothing) when the payload
        is not JSON."""
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        event = Event(topic, text)
        with self._lock:
            self.published += 1
        count = self.deliver(event)
        relay = self.relay
        if relay is not None:
            relay.send(event)
        return count

    def deliver(self, event: Event) -> int:
        """Queue `event` for this server's subscribers of its topic only (an event another worker published)."""
        with self._lock:
            channels = tuple(self._topics.get(event.topic, ()))
        return sum(channel.put(event) for channel in channels)

    def watched(self, topic: str) -> bool:
        """Whether an event of `topic` may have a subscriber: one here, or (with a relay) on any worker."""
        return self.relay is not None or bool(self.subscribers(topic))

    def subscribe(self, topic: str, handler: EventHandler) -> Subscription:
        """Deliver the events of `topic` to `handler` on the running loop, from the next publication on."""
        return self._subscribe(topic, handler, batch=False, interval=0.0)

    def subscribe_batches(self, topic: str, handler: BatchHandler) -> Subscription:
        """Deliver the events of `topic` to `handler` on the running loop in batches, from the next publication on:
        at most one batch per `coalesce` seconds, each with every event since the one before (an event after a quiet
        interval comes at once, the ones after it together when the interval is over). A view draws what it can:
        a burst of changes costs it a few updates, not one each. `deliver_now()` hands over the waiting ones at
        once (the acting view's own change is never delayed)."""
        return self._subscribe(topic, handler, batch=True, interval=self.coalesce)

    def _subscribe(
        self, topic: str, handler: EventHandler | BatchHandler, *, batch: bool, interval: float
    ) -> Subscription:
        dispatcher = self._dispatcher()
        with self._lock:
            channels = self._topics.setdefault(topic, [])
            channel = next((one for one in channels if one.dispatcher is dispatcher and one.interval == interval), None)
            if channel is None:
                channel = Channel(topic, dispatcher, interval)
                channels.append(channel)
            subscription = Subscription(self, channel, handler, batch)
            channel.add(subscription)
        return subscription

    def hold(self) -> contextlib.AbstractContextManager[None]:
        """While held, deliveries on the running loop wait (at most `MAX_HOLD` seconds from the first hold); the
        bridge holds them during a view call. Subscribers' own `deliver_now()` is not held."""
        return self._dispatcher().hold()

    def _dispatcher(self) -> Dispatcher:
        loop = asyncio.get_running_loop()
        with self._lock:
            for closed in [other for other in self._dispatchers if other.is_closed()]:
                del self._dispatchers[closed]
            return self._dispatchers.setdefault(loop, Dispatcher(loop))

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop delivering to `subscription` (as `subscription.close()` does)."""
        with self._lock:
            channel = subscription.channel
            channel.remove(subscription)
            channels = self._topics.get(channel.topic, [])
            if not channel.subscriptions and channel in channels:
                channels.remove(channel)
            if not channels:
                self._topics.pop(channel.topic, None)

    def subscribers(self, topic: str) -> int:
        """How many subscriptions in this process receive `topic`."""
        with self._lock:
            return sum(len(channel.subscriptions) for channel in self._topics.get(topic, ()))

    def subscriptions(self) -> int:
        """How many subscriptions in this process receive any topic (a closed view's should be gone)."""
        with self._lock:
            return sum(len(channel.subscriptions) for channels in self._topics.values() for channel in channels)
