"""An MCP request before the app events it causes: while a POST to `/mcp` is answered, the server's app events wait
(`AppEvents.hold`, at most its `MAX_HOLD`). Without it an acting call's answer travelled back through the SDK and
the HTTP response one loop turn at a time, each turn behind one watching view's share of the change the call had
just made: with 1,000 views watching, ~20 ms on every call."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from webapp.events import AppEvents

__all__ = ["CallsFirst"]


class CallsFirst:
    """Wraps the `/mcp` endpoint: app events wait while it answers a POST (a GET's stream of events does not hold)."""

    def __init__(self, app: ASGIApp, events: AppEvents) -> None:
        self._app = app
        self._events = events

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") != "POST":
            await self._app(scope, receive, send)
            return
        with self._events.hold():
            await self._app(scope, receive, send)
