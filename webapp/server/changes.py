"""What changed on the MCP surface (a resource, the tool, prompt or resource lists), told to whoever listens on any
worker: the 2026 `subscriptions/listen` streams (the SDK's `ListenHandler` over this bus) and the 2025 sessions
subscribed with `resources/subscribe`. Changes ride the app events, which `--redis-url` relays to every worker; a
resource's changes go out at most once a second (coalesced before they are published), to the other workers only while
a client on some worker hears of resource changes (its heartbeat says so, `webapp.cluster`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Final, Protocol

from mcp.server.subscriptions import (
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)

from webapp.events import AppEvents, Event, Subscription

__all__ = ["TOPIC", "UPDATED_TOPIC", "ChangeBus"]

log = logging.getLogger(__name__)

TOPIC: Final = "webapp/mcp"
"""The app-event topic of the lists' changes; payload `{"kind": "tools"|"prompts"|"resources"}`."""
UPDATED_TOPIC: Final = "webapp/mcp/updated"
"""The app-event topic of a resource's change; payload `{"kind": "updated", "uri": URI}`."""
QUIET: Final = 1.0
"""Seconds between two publications of one resource's change."""
_LISTS: Final[dict[str, ServerEvent]] = {
    "tools": ToolsListChanged(),
    "prompts": PromptsListChanged(),
    "resources": ResourcesListChanged(),
}


class _Sessions(Protocol):
    """The 2025 subscriptions (`webapp.server.subscriptions.Subscriptions`)."""

    def subscribed(self, uri: str) -> bool: ...
    def updated(self, uri: str) -> Awaitable[None]: ...
    def __len__(self) -> int: ...


class ChangeBus:
    """A `SubscriptionBus` (the SDK's seam for listen streams) over the app events, which also tells the 2025
    subscribers of a resource here; `handler()` makes the `subscriptions/listen` handler of one MCP server."""

    def __init__(self, events: AppEvents, sessions: _Sessions) -> None:
        self._events = events
        self._sessions = sessions
        self._listeners: dict[object, Callable[[ServerEvent], None]] = {}
        self._following: list[Subscription] = []
        self._streams = 0  # listen streams open here that hear of resources
        self._handlers: list[ListenHandler] = []
        self._last: dict[str, float] = {}  # a resource's URI: when its change was last published
        self._due: set[str] = set()  # URIs whose change waits for the quiet time
        self.closed = False
        """Set when the server stops: the listen streams ended, and new ones are refused."""
        self.updated_topic = UPDATED_TOPIC

    # -- the SDK's SubscriptionBus ---------------------------------------------------------------------------------
    async def publish(self, event: ServerEvent) -> None:
        """Tell every worker's listeners of `event` (a resource's change at most once a second)."""
        if isinstance(event, ResourceUpdated):
            self.resource_updated(event.uri)
            return
        kind = next(name for name, listed in _LISTS.items() if listed == event)
        self._events.publish(TOPIC, {"kind": kind})

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        """Call `listener` with every change from now on, whichever worker it happened on (on the running loop)."""
        self.follow()
        token = object()
        self._listeners[token] = listener

        def unsubscribe() -> None:
            self._listeners.pop(token, None)

        return unsubscribe

    # -- webapp ----------------------------------------------------------------------------------------------------
    def handler(self) -> ListenHandler:
        """The `subscriptions/listen` handler of one MCP server (ended with the others by `close()`)."""
        handler = ListenHandler(self)
        self._handlers.append(handler)
        return handler

    def follow(self) -> None:
        """Receive the changes from now on (on the running loop); a 2025 subscription or a listen stream needs them."""
        if not self._following:
            self._following = [self._events.subscribe(topic, self._received) for topic in (TOPIC, UPDATED_TOPIC)]

    def listened(self) -> bool:
        """Whether a client here hears of resource changes (the other workers send theirs only while one does)."""
        return self._streams > 0 or len(self._sessions) > 0

    @contextlib.contextmanager
    def streaming(self, uris: Sequence[str]) -> Generator[None]:
        """One listen stream, while it is open: it hears of the resources `uris`."""
        self._streams += bool(uris)
        try:
            yield
        finally:
            self._streams -= bool(uris)

    def watched(self, uri: str) -> bool:
        """Whether a change of `uri` may have a listener: here, or (with `--redis-url`) on another worker."""
        return self._events.relay is not None or self._streams > 0 or self._sessions.subscribed(uri)

    def resource_updated(self, uri: str) -> None:
        """`uri` changed: published now, or once a second has passed since its last publication (the changes
        meanwhile are one); nothing when nobody may listen."""
        if uri in self._due or not self.watched(uri):
            return
        now = time.monotonic()
        self._last = {told: at for told, at in self._last.items() if now - at < QUIET}
        wait = self._last.get(uri, -QUIET) + QUIET - now
        if wait <= 0:
            self._publish_update(uri)
            return
        self._due.add(uri)
        asyncio.get_running_loop().call_later(wait, self._publish_update, uri)

    def close(self) -> None:
        """End every listen stream (each sends its final result) and refuse new ones: the server stops."""
        self.closed = True
        for handler in self._handlers:
            handler.close()

    def _publish_update(self, uri: str) -> None:
        self._due.discard(uri)
        self._last[uri] = time.monotonic()
        try:
            self._events.publish(UPDATED_TOPIC, {"kind": "updated", "uri": uri})
        except Exception:  # a timer's callback: its failure is logged, never raised into the loop
            log.exception("could not publish the change of %r", uri)

    def _received(self, event: Event) -> Awaitable[None] | None:
        payload = event.payload
        if not isinstance(payload, dict):
            return None
        kind, uri = payload.get("kind"), payload.get("uri")
        change = ResourceUpdated(uri) if kind == "updated" and isinstance(uri, str) else _LISTS.get(str(kind))
        if change is None:
            return None
        for listener in list(self._listeners.values()):
            try:
                listener(change)
            except Exception:  # one stream's trouble must not keep the change from the others
                log.exception("a listen stream did not take a change")
        if isinstance(change, ResourceUpdated) and self._sessions.subscribed(change.uri):
            return self._sessions.updated(change.uri)
        return None
