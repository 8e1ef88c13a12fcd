"""Which foreign-origin requests the embedded-page rule admits (apps.md §13), decided on ASGI scopes alone: `Origin:
null` (a frame in an opaque-origin sandbox) and a host sandbox's origin (a page booted directly by a ticket)."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.embed import BOOT_PATH, EmbedOrigins

KEY = "k" * 43
EMBEDDED = "embedded-client-id"
BOOTED = "booted-client-id"
SANDBOX = "https://0123abcd.claudemcpcontent.com"


def scope(
    path: str, query: str = "", *, method: str = "GET", kind: str = "http", origin: str | None = None
) -> dict[str, Any]:
    found: dict[str, Any] = {"type": kind, "path": path, "query_string": query.encode()}
    if kind == "http":
        found["method"] = method
    if origin is not None:
        found["headers"] = [(b"origin", origin.encode())]
    return found


def rule() -> EmbedOrigins:
    return EmbedOrigins({EMBEDDED, BOOTED}, {BOOTED}, lambda path, key: path == "/counter" and key == KEY)


@pytest.mark.parametrize(
    ("request_scope", "grant"),
    [
        (scope("/_nicegui/3.18.0/static/nicegui.js"), "cors"),
        (scope("/_nicegui/3.18.0/components/abc/query.js", method="HEAD"), "cors"),
        (scope("/_nicegui_ws/socket.io/", f"EIO=4&transport=polling&client_id={EMBEDDED}"), "pass"),
        (scope("/_nicegui_ws/socket.io/", f"EIO=4&transport=websocket&client_id={EMBEDDED}", kind="websocket"), "pass"),
        (scope("/counter", f"key={KEY}&embed=1"), "cors"),
        (scope("/counter", f"key={KEY}&embed=1", method="OPTIONS"), "cors"),
        (scope(BOOT_PATH, "ticket=t"), "cors"),
        (scope("/_nicegui/3.18.0/static/nicegui.js", origin=SANDBOX), "cors"),
        (scope("/_webapp/pages-0123456789abcdef.css", origin=SANDBOX), "cors"),
        (scope(BOOT_PATH, "ticket=t", origin=SANDBOX), "cors"),
        (scope("/_nicegui_ws/socket.io/", f"EIO=4&transport=polling&client_id={BOOTED}", origin=SANDBOX), "pass"),
        (scope("/_nicegui_ws/socket.io/", f"client_id={BOOTED}", kind="websocket", origin=SANDBOX), "pass"),
    ],
)
def test_an_embedded_pages_own_requests_are_admitted(request_scope: dict[str, Any], grant: str) -> None:
    assert rule()(request_scope) == grant


@pytest.mark.parametrize(
    "request_scope",
    [
        scope("/_nicegui/3.18.0/static/nicegui.js", method="POST"),
        scope("/_nicegui/3.18.0/static/nicegui.js", method="OPTIONS"),
        scope("/_nicegui_ws/socket.io/", "EIO=4&transport=polling&client_id=someone-else"),
        scope("/_nicegui_ws/socket.io/", "EIO=4&transport=polling"),
        scope("/counter", f"key={KEY}"),
        scope("/counter", f"key={KEY}&embed=0"),
        scope("/counter", "key=wrong&embed=1"),
        scope("/notes", f"key={KEY}&embed=1"),
        scope("/counter", f"key={KEY}&embed=1", method="POST"),
        scope("/mcp", method="POST"),
        scope("/viewer"),
        scope("/counted"),
        scope(BOOT_PATH),
        scope(BOOT_PATH, "ticket=t", method="POST"),
        scope(BOOT_PATH, origin=SANDBOX),
        scope("/_nicegui_ws/socket.io/", f"EIO=4&transport=polling&client_id={EMBEDDED}", origin=SANDBOX),
        scope("/_nicegui_ws/socket.io/", f"client_id={EMBEDDED}", kind="websocket", origin=SANDBOX),
        scope("/counter", f"key={KEY}&embed=1", origin=SANDBOX),
        scope("/counter", f"key={KEY}&embed=1", method="OPTIONS", origin=SANDBOX),
        scope("/mcp", method="POST", origin=SANDBOX),
        scope("/viewer", origin=SANDBOX),
    ],
)
def test_every_other_request_is_left_to_the_guard_which_refuses_it(request_scope: dict[str, Any]) -> None:
    assert rule()(request_scope) is None
