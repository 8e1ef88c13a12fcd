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

    async def empty() -> Any:
        return {"type": "http.request", "body": b""}

    answering = CallsFirst(endpoint, events)
    await answering({"type": "http", "method": "POST"}, empty, nothing)
    await asyncio.sleep(0.01)
    assert seen == ["POST answered", "event after POST"]
    seen.clear()
    await answering({"type": "http", "method": "GET"}, nothing, nothing)  # a stream of events: nothing waits for it
    assert seen == ["event after GET", "GET answered"]


async def test_a_call_of_a_views_plumbing_holds_nothing_and_its_body_reaches_the_endpoint_whole() -> None:
    events, seen = AppEvents(), list[str]()
    events.subscribe("views", lambda event: seen.append(f"event after {event.payload}"))
    received: list[bytes] = []

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        received.append(body)
        events.publish("views", "tunnel")
        await asyncio.sleep(0.05)
        seen.append("tunnel answered")

    chunks = [b'{"jsonrpc":"2.0","id":1,"method":"tools/call",', b'"params":{"name":"webapp_tunnel_http"}}']

    async def receive() -> Any:
        body = chunks.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(chunks)}

    async def nothing(*_: Any) -> Any:
        return None

    answering = CallsFirst(endpoint, events, lambda name: name.startswith("webapp_tunnel_"))
    await answering({"type": "http", "method": "POST"}, receive, nothing)
    assert received == [b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"webapp_tunnel_http"}}']
    assert seen == ["event after tunnel", "tunnel answered"]
