"""An MCP request before the app events it causes: while a POST to `/mcp` is answered, the server's app events wait
(`AppEvents.hold`, at most its `MAX_HOLD`). Without it an acting call's answer travelled back through the SDK and
the HTTP response one loop turn at a time, each turn behind one watching view's share of the change the call had
just made: with 1,000 views watching, ~20 ms on every call.

A call of a view's own plumbing (an app-only tool: a tunnelled view's socket) holds nothing: its long-held polls
would keep every delivery waiting, and its answers carry those deliveries."""

from __future__ import annotations

import re
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webapp.events import AppEvents

__all__ = ["CallsFirst"]

_PEEK = 64 * 1024  # bytes of a body read before deciding (a call's name comes early in any client's JSON)
_NAMED = re.compile(rb'"name"\s*:\s*"([^"\\]{1,128})"')


class CallsFirst:
    """Wraps the `/mcp` endpoint: app events wait while it answers a POST (a GET's stream of events does not hold,
    nor does a call of a tool `unheld(name)` says is a view's plumbing)."""

    def __init__(self, app: ASGIApp, events: AppEvents, unheld: Callable[[str], bool] = lambda _: False) -> None:
        self._app = app
        self._events = events
        self._unheld = unheld

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        read, replay = await _peek(receive)
        if self._calls_unheld(read):
            await self._app(scope, replay, send)
            return
        with self._events.hold():
            await self._app(scope, replay, send)

    def _calls_unheld(self, body: bytes) -> bool:
        # the first name in the message; mistaking a message for plumbing costs only the hold, so no full parse
        named = _NAMED.search(body)
        return named is not None and self._unheld(named.group(1).decode("utf-8", "replace"))


async def _peek(receive: Receive) -> tuple[bytes, Receive]:
    """The body's first `_PEEK` bytes (or all of it), and a `receive` that hands the request over from its start."""
    messages: list[Message] = []
    read = b""
    while len(read) < _PEEK:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        read += message.get("body", b"")
        if not message.get("more_body", False):
            break

    async def replay() -> Message:
        return messages.pop(0) if messages else await receive()

    return read, replay
