"""One server's app events: a publisher never waits for its subscribers, and no subscriber waits for another.

A payload is encoded to JSON text once when published (so a bad payload fails in the publisher, and the same
text travels to the other workers through an attached `Relay`) and decoded at most once, however many subscribers
receive it. It is queued once per event loop, not once per subscriber: each subscription reads on from its own place
in its topic's queue, so a publisher (an acting call) pays the same for one watching view as for a thousand.
Delivery serves one subscriber per turn of its event loop, and waits while a `hold()` is active (at most
`MAX_HOLD`): the server holds deliveries during a view call and while it answers an MCP request, so neither the
caller's browser round trip nor its response is queued behind every watcher's work.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterator
from typing import Any, Protocol

__all__ = ["RESYNC", "AppEvents", "Event", "EventHandler", "JsonValue", "Relay", "Subscription"]

log = logging.getLogger(__name__)

JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None
"""A value JSON can hold: the payload of an event."""
MAX_HOLD = 0.25  # seconds a hold may delay deliveries
RESYNC = "webapp/resync"
"""The topic of an event (payload null) the server delivers when its subscribers may have missed events of other
workers (Redis came back, or stalled while a worker published): subscribers re-read what they show."""


class Event:
    """One published event: its topic and its payload (decoded once, shared by every subscriber: do not mutate)."""

    __slots__ = ("_decoded", "_payload", "text", "topic")

    def __init__(self, topic: str, text: str) -> None:
        self.topic = topic
        self.text = text
        self._decoded = False
        self._payload: JsonValue = None

    @property
    def payload(self) -> JsonValue:
        """The event's payload, decoded from its JSON text on first use."""
        if not self._decoded:
            self._payload = json.loads(self.text)
            self._decoded = True
        return self._payload

    def __repr__(self) -> str:
        return f"Event({self.topic!r}, {len(self.text)} bytes)"


EventHandler = Callable[[Event], object]
"""Called with each event of the subscribed topic on the subscriber's loop; may return an awaitable (run as a task)."""


class Relay(Protocol):
    """Carries this server's events to the other workers (`webapp.cluster`), which `deliver` them there."""

    def send(self, event: Event) -> None:
        """Take `event` for the other workers; called from any thread, must neither block nor raise."""


class _Channel:
    """One topic's events on one loop and its subscriptions there. An event is queued here once; a sweep then visits
    every subscription, one per loop turn, and each reads on from its own position. Thread-safe to feed."""

    def __init__(self, topic: str, dispatcher: _Dispatcher) -> None:
        self.topic = topic
        self.dispatcher = dispatcher
        self.lock = threading.Lock()
        self.events: deque[Event] = deque()
        self.start = 0  # the position of events[0]: positions count every event this channel queued
        self.subscriptions: list[Subscription] = []
        self._queued = False  # a sweep is waiting or running

    @property
    def end(self) -> int:
        return self.start + len(self.events)

    def put(self, event: Event) -> int:
        """Queue `event` for every subscription here; returns how many there are."""
        with self.lock:
            if not self.subscriptions:
                return 0
            self.events.append(event)
            count, first = len(self.subscriptions), not self._queued
            self._queued = True
        if first and not self.dispatcher.ready(self):
            with self.lock:  # the loop is closed: nobody will ever read them
                self.events.clear()
                self._queued = False
        return count

    def add(self, subscription: Subscription) -> None:
        with self.lock:
            subscription.position = self.end  # from the next event on
            self.subscriptions.append(subscription)

    def remove(self, subscription: Subscription) -> None:
        with self.lock:
            if subscription in self.subscriptions:
                self.subscriptions.remove(subscription)

    def next_event(self, subscription: Subscription) -> Event | None:
        """The next event `subscription` has not read (its position moves past it), or None."""
        with self.lock:
            index = subscription.position - self.start
            if index >= len(self.events):
                return None
            subscription.position += 1
            return self.events[index]

    def sweep(self) -> tuple[tuple[Subscription, ...], int]:
        """The subscriptions to visit now, and the end they will all have read up to (`swept`)."""
        with self.lock:
            return tuple(self.subscriptions), self.end

    def swept(self, until: int) -> bool:
        """A sweep visited every subscription: the events before `until` are dropped. Returns whether more came
        meanwhile (the channel then stays queued for the next sweep)."""
        with self.lock:
            while self.start < until and self.events:
                self.events.popleft()
                self.start += 1
            self._queued = bool(self.events)
            return self._queued


class _Dispatcher:
    """The channels of one loop that have events waiting, swept one subscription per loop turn (thread-safe to
    feed)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._ready: deque[_Channel] = deque()
        self._lock = threading.Lock()
        self._running = False
        self._holds = 0  # only touched on the loop's thread, like the rest below
        self._hold_ends = 0.0
        self._parked: asyncio.TimerHandle | None = None
        self._sweep: tuple[_Channel, Iterator[Subscription], int] | None = None  # who is left, and their end

    def ready(self, channel: _Channel) -> bool:
        """Sweep `channel` after those already waiting; False when this loop is closed."""
        with self._lock:
            self._ready.append(channel)
            if self._running:
                return True
            self._running = True
        try:
            self.loop.call_soon_threadsafe(self._step)
        except RuntimeError:  # the loop is closed: nobody listens on it any more
            with self._lock:
                self._ready.clear()
                self._running = False
            return False
        return True

    @contextlib.contextmanager
    def hold(self) -> Generator[None]:
        if not self._holds:
            self._hold_ends = self.loop.time() + MAX_HOLD
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if not self._holds and self._parked is not None:
                self._parked.cancel()
                self._parked = None
                self.loop.call_soon(self._step)

    def _step(self) -> None:
        if self._holds and self.loop.time() < self._hold_ends:
            if self._parked is None:  # go on when the hold ends, or at its deadline
                self._parked = self.loop.call_at(self._hold_ends, self._unpark)
            return
        if self._sweep is None:
            with self._lock:
                channel = self._ready.popleft() if self._ready else None
                self._running = channel is not None
            if channel is None:
                return
            subscriptions, until = channel.sweep()
            self._sweep = channel, iter(subscriptions), until
        channel, left, until = self._sweep
        subscription = next(left, None)
        if subscription is not None:
            subscription.deliver_now()
        else:
            self._sweep = None
            if channel.swept(until):
                self.ready(channel)
        self.loop.call_soon(self._step)  # the next subscriber on the next turn: I/O and other tasks come between

    def _unpark(self) -> None:
        self._parked = None
        self._step()


class Subscription:
    """One handler of one topic. It reads its topic's events from its own position when its loop's sweep visits it
    (or at once: `deliver_now()`)."""

    def __init__(self, events: AppEvents, channel: _Channel, handler: EventHandler) -> None:
        self.topic = channel.topic
        self.position = 0
        """How many of its channel's events came before this subscription's next one (the channel sets it)."""
        self.channel = channel
        """Its topic's queue on its loop."""
        self._events = events
        self._handler = handler
        self._tasks: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks
        self.closed = False

    def deliver_now(self) -> None:
        """Hand every waiting event to the handler at once, in order (e.g. the acting view before its call returns)."""
        while not self.closed and (event := self.channel.next_event(self)) is not None:
            self._events.delivered += 1  # on the loop's thread, like every delivery
            try:
                result = self._handler(event)
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

    def __init__(self) -> None:
        self._topics: dict[str, list[_Channel]] = {}  # a channel per loop with subscribers of the topic
        self._dispatchers: dict[asyncio.AbstractEventLoop, _Dispatcher] = {}
        self._lock = threading.Lock()
        self.relay: Relay | None = None
        """Set while this server is one worker among several: every published event goes to the others too."""
        self.published = 0
        """Events published here since the start (the server's metrics read it)."""
        self.delivered = 0
        """Events handed to a subscriber's handler since the start, one per subscriber (the server's metrics)."""

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
        dispatcher = self._dispatcher()
        with self._lock:
            channels = self._topics.setdefault(topic, [])
            channel = next((channel for channel in channels if channel.dispatcher is dispatcher), None)
            if channel is None:
                channel = _Channel(topic, dispatcher)
                channels.append(channel)
            subscription = Subscription(self, channel, handler)
            channel.add(subscription)
        return subscription

    def hold(self) -> contextlib.AbstractContextManager[None]:
        """While held, deliveries on the running loop wait (at most `MAX_HOLD` seconds from the first hold); the
        bridge holds them during a view call. Subscribers' own `deliver_now()` is not held."""
        return self._dispatcher().hold()

    def _dispatcher(self) -> _Dispatcher:
        loop = asyncio.get_running_loop()
        with self._lock:
            for closed in [other for other in self._dispatchers if other.is_closed()]:
                del self._dispatchers[closed]
            return self._dispatchers.setdefault(loop, _Dispatcher(loop))

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
