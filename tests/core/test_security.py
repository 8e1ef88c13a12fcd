"""HostOriginGuard in process: which Host/Origin values pass, what refused requests get, and that nothing runs."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from webapp.core.security import HostOriginGuard, HostPolicy, NullOriginGrant, normalize_origin

LOOPBACK = ["127.0.0.1:8123", "localhost:8123", "[::1]:8123"]
ORIGINS = ["http://127.0.0.1:8123", "http://localhost:8123", "http://[::1]:8123"]
POLICY = HostPolicy.of(LOOPBACK, ORIGINS)


class Counting:
    """An ASGI app that counts the http and websocket scopes that reach it."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": 1000})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ran"})


async def http_get(app: Any, headers: dict[str, str], path: str = "/") -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8123") as client:
        return await client.get(path, headers=headers)


async def websocket_messages(app: Any, headers: list[tuple[bytes, bytes]]) -> list[Message]:
    """Drive one websocket handshake through `app`; returns what it sent."""
    sent: list[Message] = []
    incoming: list[Message] = [{"type": "websocket.connect"}]

    async def receive() -> Message:
        return incoming.pop(0) if incoming else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {"type": "websocket", "path": "/_nicegui_ws/socket.io/", "headers": headers}
    await app(scope, receive, send)
    return sent


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.1:8123", None),
        ("localhost:8123", None),
        ("[::1]:8123", None),
        ("LOCALHOST:8123", None),
        ("127.0.0.1:8123", "http://127.0.0.1:8123"),
        ("127.0.0.1:8123", "http://localhost:8123"),
        ("localhost:8123", "http://[::1]:8123"),
        ("localhost:8123", "HTTP://LocalHost:8123"),
    ],
)
async def test_loopback_hosts_on_the_serving_port_pass_and_the_app_runs(host: str, origin: str | None) -> None:
    app = Counting()
    headers = {"Host": host} | ({"Origin": origin} if origin else {})
    response = await http_get(HostOriginGuard(app, POLICY), headers)
    assert (response.status_code, response.text, app.calls) == (200, "ran", 1)


@pytest.mark.parametrize(
    ("host", "origin", "status"),
    [
        ("evil.example", None, 421),
        ("evil.example:8123", None, 421),
        ("127.0.0.1:9999", None, 421),
        ("localhost", None, 421),
        ("127.0.0.1:8123.evil.example", None, 421),
        ("127.0.0.1:8123", "null", 403),
        ("127.0.0.1:8123", "http://localhost:9999", 403),
        ("127.0.0.1:8123", "http://evil.example", 403),
        ("127.0.0.1:8123", "https://127.0.0.1:8123", 403),
        ("127.0.0.1:8123", "http://127.0.0.1:8123/path", 403),
        ("127.0.0.1:8123", "http://user@127.0.0.1:8123", 403),
        ("127.0.0.1:8123", "", 403),
        ("127.0.0.1:8123", "http://127.0.0.1", 403),
    ],
)
async def test_a_foreign_host_or_origin_is_refused_and_nothing_runs(host: str, origin: str | None, status: int) -> None:
    app = Counting()
    headers = {"Host": host} | ({"Origin": origin} if origin is not None else {})
    response = await http_get(HostOriginGuard(app, POLICY), headers)
    assert response.status_code == status
    assert app.calls == 0
    assert host not in response.text and "evil" not in response.text


async def raw_http_status(app: Any, headers: list[tuple[bytes, bytes]]) -> int:
    """The status the guard answers to a GET with exactly these raw headers (none, or repeated ones)."""
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/", "headers": headers}
    await HostOriginGuard(app, POLICY)(scope, receive, send)
    return int(sent[0]["status"])


async def test_a_request_without_host_gets_400_and_nothing_runs() -> None:
    app = Counting()
    assert await raw_http_status(app, []) == 400 and app.calls == 0


async def test_two_host_headers_are_refused() -> None:
    app = Counting()
    headers = [(b"host", b"127.0.0.1:8123"), (b"host", b"evil.example")]
    assert await raw_http_status(app, headers) == 400 and app.calls == 0


async def test_two_origin_headers_are_refused_even_when_both_are_allowed() -> None:
    app = Counting()
    headers = [(b"host", b"127.0.0.1:8123"), (b"origin", b"http://127.0.0.1:8123"), (b"origin", ORIGINS[1].encode())]
    assert await raw_http_status(app, headers) == 403 and app.calls == 0


async def test_a_websocket_with_a_foreign_origin_is_closed_before_the_handshake_and_nothing_runs() -> None:
    app = Counting()
    headers = [(b"host", b"127.0.0.1:8123"), (b"origin", b"http://localhost:9999")]
    sent = await websocket_messages(HostOriginGuard(app, POLICY), headers)
    assert [m["type"] for m in sent] == ["websocket.close"]
    assert app.calls == 0


async def test_a_websocket_with_a_foreign_host_is_closed_before_the_handshake() -> None:
    app = Counting()
    sent = await websocket_messages(HostOriginGuard(app, POLICY), [(b"host", b"evil.example:8123")])
    assert [m["type"] for m in sent] == ["websocket.close"] and app.calls == 0


async def test_a_websocket_from_an_allowed_origin_is_accepted() -> None:
    app = Counting()
    headers = [(b"host", b"localhost:8123"), (b"origin", b"http://localhost:8123")]
    sent = await websocket_messages(HostOriginGuard(app, POLICY), headers)
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.close"] and app.calls == 1


async def test_every_http_response_says_no_referrer() -> None:
    app = Counting()
    served = await http_get(HostOriginGuard(app, POLICY), {"Host": "127.0.0.1:8123"})
    refused = await http_get(HostOriginGuard(app, POLICY), {"Host": "evil.example"})
    assert served.headers["referrer-policy"] == "no-referrer"
    assert refused.headers["referrer-policy"] == "no-referrer"


async def test_a_frame_grant_serves_a_foreign_origin_without_any_cors_grant_and_never_opens_a_socket() -> None:
    async def granting(scope: Scope, receive: Receive, send: Send) -> None:  # an app that would grant CORS itself
        headers = [(b"access-control-allow-origin", b"*"), (b"access-control-allow-credentials", b"true")]
        headers.append((b"vary", b"Accept-Encoding"))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"ran"})

    async def frame(scope: Scope) -> NullOriginGrant:
        return "frame"

    guard = HostOriginGuard(granting, POLICY, null_origin=frame)
    served = await http_get(guard, {"Host": "127.0.0.1:8123", "Origin": "https://sandbox.example"})
    assert served.status_code == 200 and served.text == "ran"
    assert not [name for name in served.headers if name.startswith("access-control-")], served.headers
    assert served.headers["vary"] == "Accept-Encoding" and served.headers["referrer-policy"] == "no-referrer"
    app = Counting()
    headers = [(b"host", b"127.0.0.1:8123"), (b"origin", b"https://sandbox.example")]
    sent = await websocket_messages(HostOriginGuard(app, POLICY, null_origin=frame), headers)
    assert [m["type"] for m in sent] == ["websocket.close"] and app.calls == 0


async def test_the_policy_can_be_a_function_read_on_every_request() -> None:
    current = [HostPolicy.of(["127.0.0.1:1"], [])]
    app = Counting()
    guard = HostOriginGuard(app, lambda: current[0])
    assert (await http_get(guard, {"Host": "127.0.0.1:8123"})).status_code == 421
    current[0] = POLICY
    assert (await http_get(guard, {"Host": "127.0.0.1:8123"})).status_code == 200


async def test_lifespan_scopes_pass_through() -> None:
    seen: list[str] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append(scope["type"])

    async def receive() -> Message:
        return {"type": "lifespan.startup"}

    async def send(message: Message) -> None:
        return None

    await HostOriginGuard(app, POLICY)({"type": "lifespan"}, receive, send)
    assert seen == ["lifespan"]


def test_origins_are_normalized_with_their_default_port_and_in_lower_case() -> None:
    assert normalize_origin("HTTP://LocalHost") == "http://localhost:80"
    assert normalize_origin("https://example.com/") == "https://example.com:443"
    assert normalize_origin("http://[::1]:8123") == "http://[::1]:8123"
    for bad in ("null", "", "file://", "javascript:alert(1)", "http://a:b", "http://x:8123/p", "http://x?q"):
        assert normalize_origin(bad) is None, bad


def test_an_allowed_origin_setting_that_is_not_an_origin_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"http://host:port.*'localhost:\*'"):
        HostPolicy.of(["localhost:8123"], ["localhost:*"])
