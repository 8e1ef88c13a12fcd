"""The `/mcp` endpoint answers a POST before the app events published meanwhile are delivered; a GET holds nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from webapp.events import AppEvents
from webapp.server.calls_first import CallsFirst


async def test_events_published_while_a_post_is_answered_are_delivered_after_it() -> None:
    events, seen = AppEvents(), list[str]()
    events.subscribe("views", lambda event: seen.append(f"event after {event.payload}"))

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        events.publish("views", scope["method"])
        await asyncio.sleep(0.05)  # many turns of the loop: the answer travels back
        seen.append(f"{scope['method']} answered")

    async def nothing(*_: Any) -> Any:
        return None

    answering = CallsFirst(endpoint, events)
    await answering({"type": "http", "method": "POST"}, nothing, nothing)
    await asyncio.sleep(0.01)
    assert seen == ["POST answered", "event after POST"]
    seen.clear()
    await answering({"type": "http", "method": "GET"}, nothing, nothing)  # a stream of events: nothing waits for it
    assert seen == ["event after GET", "GET answered"]
