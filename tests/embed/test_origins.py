"""Which foreign-origin requests the embedded-page rule admits (apps.md §13): `Origin: null` (a frame in an
opaque-origin sandbox), a host sandbox's origin (a page booted directly by a ticket) and any origin on a nested frame's
navigation to a page with a valid key — decided on ASGI scopes, and the last one also over HTTP against a server.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.support.e2e import RunningServer, run_server
from tests.support.views import COUNTER_APP, FAST, attach_key, structured
from webapp.embed import BOOT_PATH, EmbedOrigins

KEY = "k" * 43
EMBEDDED = "embedded-client-id"
BOOTED = "booted-client-id"
SANDBOX = "https://0123abcd.claudemcpcontent.com"
CHATGPT = "https://connector-0123abcd.web-sandbox.oaiusercontent.com"
FRAME = {"Sec-Fetch-Dest": "iframe"}


def scope(
    path: str,
    query: str = "",
    *,
    method: str = "GET",
    kind: str = "http",
    origin: str | None = None,
    dest: str | None = None,
) -> dict[str, Any]:
    found: dict[str, Any] = {"type": kind, "path": path, "query_string": query.encode(), "headers": []}
    if kind == "http":
        found["method"] = method
    if origin is not None:
        found["headers"].append((b"origin", origin.encode()))
    if dest is not None:
        found["headers"].append((b"sec-fetch-dest", dest.encode()))
    return found


async def valid_page(path: str, key: str) -> bool:
    return path == "/counter" and key == KEY


def rule() -> EmbedOrigins:
    return EmbedOrigins({EMBEDDED, BOOTED}, {BOOTED}, valid_page)


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
        (scope("/counter", f"key={KEY}&embed=1", origin=SANDBOX, dest="iframe"), "frame"),
        (scope("/counter", f"embed=1&key={KEY}", origin=CHATGPT, dest="iframe"), "frame"),
        (scope("/counter", f"key={KEY}&embed=1", origin="https://anyone.example", dest="iframe"), "frame"),
        (scope("/counter", f"key={KEY}&embed=1", origin="null", dest="iframe"), "cors"),
    ],
)
async def test_an_embedded_pages_own_requests_are_admitted(request_scope: dict[str, Any], grant: str) -> None:
    assert await rule()(request_scope) == grant


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
        scope("/counter", f"key={KEY}&embed=1", origin=SANDBOX, dest="empty"),  # a script's fetch, not a frame
        scope("/counter", f"key={KEY}&embed=1", origin=SANDBOX, dest="document"),
        scope("/counter", f"key={KEY}", origin=SANDBOX, dest="iframe"),
        scope("/counter", f"key={KEY}&embed=0", origin=SANDBOX, dest="iframe"),
        scope("/counter", "key=wrong&embed=1", origin=SANDBOX, dest="iframe"),
        scope("/counter", "embed=1", origin=SANDBOX, dest="iframe"),
        scope("/notes", f"key={KEY}&embed=1", origin=SANDBOX, dest="iframe"),
        scope("/counter", f"key={KEY}&embed=1", method="POST", origin=SANDBOX, dest="iframe"),
        scope("/counter", f"key={KEY}&embed=1", method="HEAD", origin=SANDBOX, dest="iframe"),
        scope("/counter", f"key={KEY}&embed=1", method="OPTIONS", origin=SANDBOX, dest="iframe"),
        scope("/_nicegui_ws/socket.io/", f"client_id={EMBEDDED}", kind="websocket", origin=SANDBOX, dest="iframe"),
        scope(BOOT_PATH, origin=SANDBOX, dest="iframe"),
        scope("/viewer", origin=SANDBOX, dest="iframe"),
    ],
)
async def test_every_other_request_is_left_to_the_guard_which_refuses_it(request_scope: dict[str, Any]) -> None:
    assert await rule()(request_scope) is None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(*FAST, app=COUNTER_APP, db=tmp_path_factory.mktemp("origins") / "views.db") as running:
        yield running


async def opened_key(server: RunningServer) -> str:
    async with Client(server.mcp_url) as agent:
        return attach_key(str(structured(await agent.call_tool("counter", {}))["url"]))


@pytest.mark.parametrize("origin", [SANDBOX, CHATGPT, "https://anyone.example", "http://127.0.0.1:1"])
async def test_a_nested_frames_navigation_with_a_valid_key_is_served_from_any_origin_without_a_cors_grant(
    server: RunningServer, origin: str
) -> None:
    key = await opened_key(server)
    async with httpx.AsyncClient(base_url=server.base_url, headers={"Origin": origin, **FRAME}) as browser:
        page = await browser.get("/counter", params={"key": key, "embed": "1"})
    assert page.status_code == 200, page.text
    assert "__webappBeforeApp" in page.text  # the view's page in embedded mode
    assert not [name for name in page.headers if name.lower().startswith("access-control-")], page.headers
    assert page.headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize(
    ("method", "query", "headers"),
    [
        ("GET", "key={key}&embed=1", {}),  # no Sec-Fetch-Dest: not a frame's navigation
        ("GET", "key={key}&embed=1", {"Sec-Fetch-Dest": "empty"}),  # a script's fetch
        ("GET", "key={bad}&embed=1", FRAME),
        ("GET", "key={key}", FRAME),
        ("GET", "key={key}&embed=0", FRAME),
        ("POST", "key={key}&embed=1", FRAME),
    ],
)
async def test_a_foreign_origin_without_a_frames_navigation_or_a_valid_key_is_refused(
    server: RunningServer, method: str, query: str, headers: dict[str, str]
) -> None:
    key = await opened_key(server)
    target = "/counter?" + query.format(key=key, bad=key[:-2] + "xx")
    async with httpx.AsyncClient(base_url=server.base_url, headers={"Origin": SANDBOX, **headers}) as browser:
        refused = await browser.request(method, target)
    assert refused.status_code == 403 and refused.text == "Invalid Origin header"
    assert "access-control-allow-origin" not in refused.headers
