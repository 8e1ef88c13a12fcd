"""How app events reach the subscribers on one event loop: a topic's queue there (`Channel`) and the sweeps that
visit its subscriptions one per loop turn, held during calls and paced for batch subscribers (`Dispatcher`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
from collections import deque
from collections.abc import Callable, Generator
from typing import Protocol

__all__ = ["MAX_HOLD", "Channel", "Dispatcher", "Event", "JsonValue", "Reader"]

JsonValue = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None
"""A value JSON can hold: the payload of an event."""

MAX_HOLD = 0.25  # seconds a hold may delay deliveries


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


class Reader(Protocol):
    """A subscription as its channel sees it: where it has read up to, and how it reads on."""

    position: int

    def deliver_now(self) -> None: ...


class Channel:
    """One topic's events on one loop and its subscriptions there. An event is queued here once; a sweep then visits
    every subscription, one per loop turn, and each reads on from its own position. Thread-safe to feed.

    With an `interval`, a sweep starts at most once per interval: an event after a quiet interval is swept at once,
    the events after it together when the interval is over."""

    def __init__(self, topic: str, dispatcher: Dispatcher, interval: float = 0.0) -> None:
        self.topic = topic
        self.dispatcher = dispatcher
        self.interval = interval
        self.swept_at = -math.inf  # loop time when the last sweep started (only touched on the loop's thread)
        self.lock = threading.Lock()
        self.events: deque[Event] = deque()
        self.start = 0  # the position of events[0]: positions count every event this channel queued
        self.subscriptions: list[Reader] = []
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
        if first and not self.dispatcher.ready(self, paced=self.interval > 0):
            with self.lock:  # the loop is closed: nobody will ever read them
                self.events.clear()
                self._queued = False
        return count

    def add(self, subscription: Reader) -> None:
        with self.lock:
            subscription.position = self.end  # from the next event on
            self.subscriptions.append(subscription)

    def remove(self, subscription: Reader) -> None:
        with self.lock:
            if subscription in self.subscriptions:
                self.subscriptions.remove(subscription)

    def take(self, subscription: Reader) -> tuple[Event, ...]:
        """The events `subscription` has not read, oldest first (its position moves past them)."""
        with self.lock:
            index = max(0, subscription.position - self.start)
            subscription.position = self.end
            return tuple(self.events[i] for i in range(index, len(self.events)))

    def sweep(self, now: float) -> tuple[tuple[Reader, ...], int]:
        """The subscriptions to visit now, and the end they will all have read up to (`swept`)."""
        self.swept_at = now
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


class Dispatcher:
    """The channels of one loop that have events waiting, swept one subscription per loop turn (thread-safe to
    feed)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._thread = threading.get_ident()  # made on its loop's thread (`AppEvents` makes one per running loop)
        self._ready: deque[Channel] = deque()
        self._lock = threading.Lock()
        self._running = False
        self._holds = 0  # only touched on the loop's thread, like the rest below
        self._hold_ends = 0.0
        self._parked: asyncio.TimerHandle | None = None
        self._sweep: tuple[Channel, deque[Reader], int] | None = None  # who is left, and their end

    def ready(self, channel: Channel, *, paced: bool = False) -> bool:
        """Sweep `channel` after those already waiting (`paced`: once its interval since its last sweep is over);
        False when this loop is closed."""
        if paced:
            try:
                self._call_soon(self._pace, channel)
            except RuntimeError:
                return False
            return True
        with self._lock:
            self._ready.append(channel)
            if self._running:
                return True
            self._running = True
        try:
            self._call_soon(self._step)
        except RuntimeError:  # the loop is closed: nobody listens on it any more
            with self._lock:
                self._ready.clear()
                self._running = False
            return False
        return True

    def _call_soon(self, callback: Callable[..., object], *args: object) -> None:
        """`callback` on the next turn of the loop: from its own thread (a relayed event, a store committing there)
        without waking it through its self-pipe, a syscall per event; from another thread, thread-safe."""
        if threading.get_ident() == self._thread:
            self.loop.call_soon(callback, *args)
        else:
            self.loop.call_soon_threadsafe(callback, *args)

    def _pace(self, channel: Channel) -> None:
        wait = channel.swept_at + channel.interval - self.loop.time()
        if wait > 0:
            self.loop.call_later(wait, self.ready, channel)
        else:
            self.ready(channel)

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
            subscriptions, until = channel.sweep(self.loop.time())
            self._sweep = channel, deque(subscriptions), until
        channel, left, until = self._sweep
        if left:
            left.popleft().deliver_now()
        if not left:  # the sweep is over in the turn of its last subscriber, and the sweeping with the last sweep
            self._sweep = None
            if channel.swept(until):
                self._pace(channel)
            with self._lock:
                self._running = bool(self._ready)
                if not self._running:
                    return
        self.loop.call_soon(self._step)  # the next subscriber on the next turn: I/O and other tasks come between

    def _unpark(self) -> None:
        self._parked = None
        self._step()
