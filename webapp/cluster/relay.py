"""App events across workers: the events this worker publishes go out in SPUBLISHes on `wv:{events}` (a sharded
channel: on a Cluster it lives on one slot node), and what the other workers publish there reaches this worker's
subscribers as if it had been published here.

The events of one loop turn go out together in one frame. A frame costs Redis one delivery per worker reading the
channel, so the workers' frames cost N² deliveries for N workers each sending one: a worker paces its frames to keep the
workers together within a `budget` of deliveries a second, one frame per `window` = N² / budget at most (N as its last
SPUBLISH counted the readers; a window is never longer than `LONGEST_WINDOW`). As a view takes its updates
(`AppEvents.subscribe_batches`), an event after a quiet window goes out at once and the ones that come within the window
go out together when it is over: a burst costs a few frames. A frame is a JSON header line `[worker, [topic, …],
encoding]`, then the events' own JSON texts, a line each, untouched (a receiver decodes a payload at most once, like a
local subscriber), zlib-compressed (`"z"`) from 512 bytes on: a stock change's 0.7 KB go out as 0.4 KB, and each worker
inflates a frame once however many views read it. Events are fire-and-forget: while Redis is away, or beyond a backlog
of `_BACKLOG` waiting for a slow Redis, they reach this worker's subscribers only (a warning says so once, not per
event), and the other workers' views are told to read anew once Redis takes frames again (`owes_resync`); the
worker's inbox subscription, which carries this channel too, comes back on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import zlib
from collections.abc import Callable, Sequence
from typing import cast

import orjson

from webapp.cluster.engine import Client
from webapp.cluster.leases import ClusterUnavailable, command
from webapp.events import RESYNC, AppEvents, Event

__all__ = ["EVENTS_CHANNEL", "LONGEST_WINDOW", "EventRelay", "frame", "read_frame"]

log = logging.getLogger(__name__)
EVENTS_CHANNEL = "wv:{events}"
_BACKLOG = 1000  # events waiting for a slow Redis at most; beyond that they reach only this worker's subscribers
_FLUSH = 1.0  # seconds a stopping worker waits for the events it published last to go out
_LATE = 0.5  # seconds after which a published event may reach views that applied newer changes meanwhile
_BATCH = 100  # events in one frame at most (a full frame's successor is not held back)
LONGEST_WINDOW = 1.0  # seconds a worker's events wait for their frame at most, however many workers read them
_COMPRESS_FROM = 512  # bytes of event text from which a frame is compressed
_LEVEL = 6  # zlib's default: 0.7 KB compress in ~10 µs, inflate in ~3 µs


def frame(worker: str, events: Sequence[Event]) -> bytes:
    """The frame that carries `events` of `worker` to the other workers."""
    body = b"\n".join(event.text.encode() for event in events)
    packed = len(body) >= _COMPRESS_FROM
    head = orjson.dumps([worker, [event.topic for event in events], "z" if packed else ""])
    return head + b"\n" + (zlib.compress(body, _LEVEL) if packed else body)


def read_frame(data: bytes, *, unless_from: str = "") -> tuple[str, list[Event]]:
    """The worker and events a frame carries (none when it comes from `unless_from`, left unread); ValueError, or
    zlib's error, when it is not a frame."""
    head, _, body = data.partition(b"\n")
    header = orjson.loads(head)
    if not (isinstance(header, list) and len(header) == 3 and isinstance(header[1], list)):
        raise ValueError(f"not the header of an events frame: {head[:80]!r}")
    origin, topics, encoding = cast(tuple[str, list[str], str], header)
    if origin == unless_from:
        return str(origin), []
    texts = (zlib.decompress(body) if encoding == "z" else body).split(b"\n")
    if len(texts) != len(topics):
        raise ValueError(f"a frame of {len(texts)} event texts for the topics {topics!r}")
    return str(origin), [Event(str(name), text.decode()) for name, text in zip(topics, texts, strict=True)]


class EventRelay:
    """Carries one worker's app events to the other workers and theirs to it (`AppEvents.relay` while started)."""

    def __init__(self, client: Client, worker: str, events: AppEvents, *, budget: float = 0.0) -> None:
        self._redis = client
        self.worker = worker
        self._events = events
        self.budget = budget
        """Deliveries a second the workers' frames may cost Redis together (0: each loop turn's events at once)."""
        self.readers = 1
        """Workers reading the events channel (this one included), as the reply to the last frame counted them."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Event] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._hurry = asyncio.Event()  # set when stopping: what waits for its window goes out at once
        self._reachable = True
        self.owes_resync = False
        """Set when an event reached no other worker: once Redis answers, `resync_others()` makes up for it."""
        self.channels: dict[str, Callable[[bytes], None]] = {EVENTS_CHANNEL: self._received}
        """The channels this relay reads, with their handlers, for the worker's subscription (`Inbox`)."""
        self.received = 0
        """Events of the other workers that reached this one (the server's metrics read it)."""
        self.frames = 0
        """Frames of the other workers that reached this one, each with one or more events."""
        self.on_demand: dict[str, Callable[[], bool]] = {}
        """Topics whose events go to the other workers only while their predicate holds (e.g. call records: only
        while a viewer follows the call log somewhere)."""

    @property
    def window(self) -> float:
        """Seconds from one frame to the next at least: N² / budget for N readers, at most `LONGEST_WINDOW`."""
        return min(LONGEST_WINDOW, self.readers**2 / self.budget) if self.budget > 0 else 0.0

    def start(self) -> None:
        """Carry the events from now on; the PUBLISHes go out from the running loop."""
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue(_BACKLOG)
        self._hurry.clear()
        self._writer = self._loop.create_task(self._write_forever(), name=f"events-{self.worker}")
        self._events.relay = self

    async def stop(self) -> None:
        """Publish locally only from now on; what is still waiting goes out first (briefly)."""
        if self._events.relay is self:
            self._events.relay = None
        self._hurry.set()
        await asyncio.sleep(0)  # the events published until now are queued first (they come with `call_soon`)
        if self._queue is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_FLUSH):
                    await self._queue.join()
        if self._writer is not None:
            self._writer.cancel()
            await asyncio.gather(self._writer, return_exceptions=True)
            self._writer = None
        self._loop = None

    def send(self, event: Event) -> None:
        """Take `event` for the other workers (from any thread: a store may commit in a worker thread)."""
        loop = self._loop
        wanted = self.on_demand.get(event.topic)
        if loop is None or (wanted is not None and not wanted()):
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the worker has stopped
            loop.call_soon_threadsafe(self._enqueue, event)

    def _enqueue(self, event: Event) -> None:
        if self._queue is None:
            return
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:  # dropped: the other workers' views read anew once the backlog is out
            self.owes_resync = True
            self._state(reachable=False, why=f"more than {_BACKLOG} events wait for Redis")

    async def _write_forever(self) -> None:
        assert self._queue is not None
        loop, sent = asyncio.get_running_loop(), -math.inf
        while True:
            events = [await self._queue.get()]
            await self._held(sent + self.window - loop.time())
            while len(events) < _BATCH and not self._queue.empty():  # the window's events, or this loop turn's
                events.append(self._queue.get_nowait())
            started = loop.time()
            sent = started if len(events) < _BATCH else -math.inf
            try:
                async with command():
                    self.readers = max(1, int(await self._redis.spublish(EVENTS_CHANNEL, frame(self.worker, events))))
            except ClusterUnavailable as error:  # dropped, never retried: a late change could overwrite a newer one
                log.debug("%d app event(s) reached no other worker", len(events))
                self.owes_resync = True
                self._state(reachable=False, why=str(error))
            else:
                self._state(reachable=True)
                if asyncio.get_running_loop().time() - started > _LATE:  # a view may drop it as older than it shows
                    self.owes_resync = True
            finally:
                for _ in events:
                    self._queue.task_done()
            if self.owes_resync and self._queue.empty():  # after the late or lost ones: the views read anew
                with contextlib.suppress(ClusterUnavailable):
                    await self.resync_others()

    async def _held(self, seconds: float) -> None:
        """Wait `seconds` for the window to end, unless the worker is stopping."""
        if seconds > 0 and not self._hurry.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(seconds):
                    await self._hurry.wait()

    def resync_here(self) -> None:
        """This worker's subscribers may have missed the other workers' events (its subscription was away)."""
        self._events.deliver(Event(RESYNC, "null"))

    async def resync_others(self) -> None:
        """Tell the other workers' subscribers that they may have missed this worker's events (ClusterUnavailable
        while Redis is still away: `owes_resync` stays set)."""
        self.owes_resync = True
        async with command():
            await self._redis.spublish(EVENTS_CHANNEL, frame(self.worker, [Event(RESYNC, "null")]))
        self.owes_resync = False

    def _state(self, *, reachable: bool, why: str = "") -> None:
        """Log when the other workers stop or start getting this worker's events (not once per event)."""
        if reachable == self._reachable:
            return
        self._reachable = reachable
        if reachable:
            log.info("app events of %s reach the other workers again", self.worker)
        else:
            log.warning("app events of %s reach only its own views for now (%s)", self.worker, why)

    def _received(self, data: bytes) -> None:
        """One frame from the events channel; a handler on the inbox's subscription, so it never raises."""
        try:
            # this worker's own events are left unread: its subscribers had them when they were published
            _, events = read_frame(data, unless_from=self.worker)
            self.received += len(events)
            self.frames += bool(events)
            for event in events:
                self._events.deliver(event)
        except Exception:  # a bad frame must not end the subscription it arrived on
            log.exception("dropped an app event frame that could not be read")
