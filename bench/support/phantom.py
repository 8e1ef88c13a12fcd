"""A phantom worker for the scale model: the `webapp.cluster` code a worker runs — its Redis engine, heartbeat and
directory entries (`Leases`), inbox (`Inbox`, whose subscription beats the heartbeat) and app-event relay
(`EventRelay`) — without NiceGUI or a database. Its views are directory entries, a call forwarded to it answers a
result of a real call's size, and its app events reach one subscriber per watched topic."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from webapp.cluster.engine import Engine
from webapp.cluster.inbox import Inbox
from webapp.cluster.leases import COMMAND_TIMEOUT, Leases
from webapp.cluster.relay import EventRelay
from webapp.core.context import LogSender, ProgressReporter
from webapp.events import AppEvents, Event, Subscription

__all__ = ["Phantom"]

LOOK_EVERY = 1.0  # seconds between two looks at the other workers' heartbeats, as a worker's `Node` looks
CALL_TIMEOUT = 10.0


class Phantom:
    """One phantom worker; `start()` subscribes, claims its views and looks at the others every second."""

    def __init__(self, redis_url: str, name: str, result: Mapping[str, Any]) -> None:
        self.name = name
        self.engine = Engine(redis_url, connect_timeout=COMMAND_TIMEOUT)
        self.leases = Leases(self.engine.client, name)
        self.events = AppEvents()
        self.relay = EventRelay(self.engine.client, name, self.events)
        self.inbox = Inbox(self.engine, self.leases, self._serve, channels=self.relay.channels)
        self._result = dict(result)
        self._subscriptions: list[Subscription] = []
        self._looker: asyncio.Task[None] | None = None

    async def start(self, *, topics: Iterable[str], views: int, others: Iterable[str]) -> None:
        await self.inbox.start()
        self.relay.start()
        self._subscriptions = [self.events.subscribe(topic, _watch) for topic in topics]
        for number in range(views):
            await self.leases.claim(hashlib.sha256(f"{self.name}/{number}".encode()).hexdigest())
        self._looker = asyncio.create_task(self._look_forever(frozenset(others)))

    async def stop(self) -> None:
        if self._looker is not None:
            self._looker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._looker
        for subscription in self._subscriptions:
            subscription.close()
        await self.relay.stop()
        await self.inbox.stop()
        await self.engine.aclose()

    async def call(self, owner: str, body: dict[str, Any]) -> dict[str, Any]:
        """A call forwarded to `owner`, as a worker forwards one to the worker holding the view's tab."""
        return await self.inbox.request(owner, body, CALL_TIMEOUT)

    async def _look_forever(self, others: frozenset[str]) -> None:
        """One read of the other workers' heartbeats a second (each holds views this worker's database knows), as a
        worker looks."""
        while True:
            await asyncio.sleep(LOOK_EVERY)
            with contextlib.suppress(Exception):
                await self.leases.look(others)

    async def _serve(
        self, _body: Mapping[str, Any], _progress: ProgressReporter | None, _log: LogSender | None
    ) -> dict[str, Any]:
        return self._result


def _watch(_event: Event) -> None:
    """A view watching the topic: the event reaches it through the worker's delivery (drawing it is not modelled)."""
