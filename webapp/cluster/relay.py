"""App events across workers: the events this worker publishes in one event-loop turn go out as one SPUBLISH on
`wv:{events}` (a sharded channel: on a Cluster it lives on one slot node), and what the other workers publish there
reaches this worker's subscribers as if it had been published here.

A frame is a JSON header line `[worker, [topic, …]]` followed by each event's own JSON text, untouched, one line
each (compact JSON has no raw line break), so a receiver decodes each payload at most once, like a local subscriber.
Events are fire-and-forget: while Redis is away they reach this worker's subscribers only (a warning says so once,
not per event), and the worker's inbox subscription, which carries this channel too, comes back on its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from webapp.cluster.engine import Client
from webapp.cluster.leases import ClusterUnavailable, command
from webapp.events import RESYNC, AppEvents, Event

__all__ = ["EVENTS_CHANNEL", "EventRelay"]

log = logging.getLogger(__name__)
EVENTS_CHANNEL = "wv:{events}"
_BACKLOG = 1000  # events waiting for a slow Redis at most; beyond that they reach only this worker's subscribers
_BATCH = 100  # events in one frame at most (a burst goes out in frames of this many, one SPUBLISH each)
_FLUSH = 1.0  # seconds a stopping worker waits for the events it published last to go out
_LATE = 0.5  # seconds after which a published event may reach views that applied newer changes meanwhile


class EventRelay:
    """Carries one worker's app events to the other workers and theirs to it (`AppEvents.relay` while started)."""

    def __init__(self, client: Client, worker: str, events: AppEvents) -> None:
        self._redis = client
        self.worker = worker
        self._events = events
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[Event] | None = None
        self._writer: asyncio.Task[None] | None = None
        self._reachable = True
        self.owes_resync = False
        """Set when an event reached no other worker: once Redis answers, `resync_others()` makes up for it."""
        self.channels: dict[str, Callable[[Mapping[str, Any]], None]] = {EVENTS_CHANNEL: self._received}
        """The channels this relay reads, with their handlers, for the worker's subscription (`Inbox`)."""
        self.received = 0
        """Events of the other workers that reached this one (the server's metrics read it)."""

    def start(self) -> None:
        """Carry the events from now on; the PUBLISHes go out from the running loop."""
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue(_BACKLOG)
        self._writer = self._loop.create_task(self._write_forever(), name=f"events-{self.worker}")
        self._events.relay = self

    async def stop(self) -> None:
        """Publish locally only from now on; what is still waiting goes out first (briefly)."""
        if self._events.relay is self:
            self._events.relay = None
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
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: the worker has stopped
            loop.call_soon_threadsafe(self._enqueue, event)

    def _enqueue(self, event: Event) -> None:
        if self._queue is None:
            return
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self._state(reachable=False, why=f"more than {_BACKLOG} events wait for Redis")

    async def _write_forever(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]  # and what was queued meanwhile (the events of one loop turn)
            while len(batch) < _BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            started = asyncio.get_running_loop().time()
            try:
                async with command():
                    await self._redis.spublish(EVENTS_CHANNEL, _frame(self.worker, batch))
            except ClusterUnavailable as error:  # dropped, never retried: a late change could overwrite a newer one
                for event in batch:
                    log.debug("an app event of %r reached no other worker", event.topic)
                self.owes_resync = True
                self._state(reachable=False, why=str(error))
            else:
                self._state(reachable=True)
                if asyncio.get_running_loop().time() - started > _LATE:  # a view may drop it as older than it shows
                    self.owes_resync = True
            finally:
                for _ in batch:
                    self._queue.task_done()
            if self.owes_resync and self._queue.empty():  # after the late or lost ones: the views read anew
                with contextlib.suppress(ClusterUnavailable):
                    await self.resync_others()

    def resync_here(self) -> None:
        """This worker's subscribers may have missed the other workers' events (its subscription was away)."""
        self._events.deliver(Event(RESYNC, "null"))

    async def resync_others(self) -> None:
        """Tell the other workers' subscribers that they may have missed this worker's events (ClusterUnavailable
        while Redis is still away: `owes_resync` stays set)."""
        self.owes_resync = True
        async with command():
            await self._redis.spublish(EVENTS_CHANNEL, _frame(self.worker, [Event(RESYNC, "null")]))
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

    def _received(self, message: Mapping[str, Any]) -> None:
        """One frame from the events channel; a handler on the inbox's subscription, so it never raises."""
        try:
            head, _, body = bytes(message["data"]).partition(b"\n")
            origin, topics = orjson.loads(head)
            if origin == self.worker:
                return  # this worker's own events: its subscribers had them when they were published
            texts = body.split(b"\n")
            if not isinstance(topics, list) or len(texts) != len(topics):
                raise ValueError(f"{len(texts)} event texts for {topics!r}")
            for topic, text in zip(topics, texts, strict=True):
                self.received += 1
                self._events.deliver(Event(str(topic), text.decode()))
        except Exception:  # a bad frame must not end the subscription it arrived on
            log.exception("dropped an app event frame that could not be read")


def _frame(worker: str, events: list[Event]) -> bytes:
    """The header line, then each event's text on a line of its own."""
    head = orjson.dumps([worker, [event.topic for event in events]])
    return b"\n".join([head, *(event.text.encode() for event in events)])
