"""Requests with foreign origins for the Host/Origin matrix: what a view page framed in an opaque-origin sandbox
sends with `Origin: null` (its static assets, its socket, its reconnect check), what a page booted directly into a
host's sandbox sends with that sandbox's origin, and the same origins everywhere they must stay refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import httpx
import websockets
from websockets.asyncio.client import connect
from websockets.typing import Origin

from tests.support.e2e import RunningServer, mcp_client
from tests.support.embed import APPS_CLIENT
from tests.support.security_http import STATIC_PATH

__all__ = ["SANDBOX", "Embedded", "NullOutcome", "null_request", "open_embedded", "sandbox_request"]

_CLIENT_ID = re.compile(r"client_id['\"]\s*:\s*['\"]([0-9a-f-]+)")
_NULL = {"Origin": "null"}
SANDBOX = "https://0123456789abcdef0123456789abcdef.claudemcpcontent.com"
"""A host sandbox's origin, as Claude's frames send it."""
_TIMEOUT = 10.0


@dataclass(frozen=True)
class Embedded:
    """A counter view's attach key, the NiceGUI client id of its page loaded with `embed=1`, and a plain page's."""

    key: str
    client_id: str
    foreign_client_id: str
    booted_client_id: str


@dataclass(frozen=True)
class NullOutcome:
    """The status, body and (lower-case) headers of an answer."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict[str, str])


async def _client_id(client: httpx.AsyncClient, path: str) -> str:
    page = await client.get(path)
    assert page.status_code == 200, page.text
    found = _CLIENT_ID.search(page.text)
    assert found is not None, "no client id in the page"
    return found.group(1)


async def open_embedded(server: RunningServer) -> Embedded:
    """Open a counter view over MCP and load its page the way a host's nested frame does (no Origin on navigation)."""
    async with mcp_client(server, extensions=[APPS_CLIENT]) as agent:
        opened = await agent.call_tool("counter", {})
        again = await agent.call_tool("counter", {})  # the same view, with a fresh boot ticket
    assert opened.structured_content is not None and again.meta is not None
    key = str(opened.structured_content["url"]).split("key=", 1)[1]
    ticket = again.meta["webapp/view"]["ticket"]
    async with httpx.AsyncClient(base_url=server.base_url, timeout=_TIMEOUT) as client:
        embedded = await _client_id(client, f"/counter?key={key}&embed=1")
        plain = await _client_id(client, "/counted")
        client.headers["Origin"] = SANDBOX
        return Embedded(key, embedded, plain, await _client_id(client, f"/_webapp/boot?ticket={ticket}"))


def _socket_path(transport: str, client_id: str) -> str:
    return f"/_nicegui_ws/socket.io/?EIO=4&transport={transport}&client_id={client_id}"


async def null_request(case: str, port: int, embedded: Embedded) -> NullOutcome:
    """One `Origin: null` request of `case` to the server on `port`."""
    page = f"/counter?key={embedded.key}&embed=1"
    if case.endswith("websocket"):
        client_id = embedded.client_id if case.startswith("embedded") else embedded.foreign_client_id
        return await _websocket(port, _socket_path("websocket", client_id))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=_TIMEOUT) as client:
        if case == "static":
            response = await client.get(STATIC_PATH, headers=_NULL)
        elif case == "static-post":
            response = await client.post(STATIC_PATH, headers=_NULL)
        elif case.endswith("polling"):
            client_id = embedded.client_id if case.startswith("embedded") else embedded.foreign_client_id
            response = await client.get(_socket_path("polling", client_id), headers=_NULL)
        elif case == "embedded-page-reconnect":
            response = await client.get(page, headers={**_NULL, "NiceGUI-Check": "try_reconnect"})
        elif case == "embedded-preflight":
            preflight = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "nicegui-check"}
            response = await client.options(page, headers={**_NULL, **preflight})
        elif case == "viewer":
            response = await client.get("/viewer", headers=_NULL)
        elif case == "page-key-without-embed":
            response = await client.get(f"/counter?key={embedded.key}", headers=_NULL)
        elif case == "page-bad-key-with-embed":
            response = await client.get(f"/counter?key={embedded.key[:-2]}xx&embed=1", headers=_NULL)
        else:
            raise ValueError(f"unknown case {case!r}")
        headers = {name.lower(): value for name, value in response.headers.items()}
        return NullOutcome(response.status_code, response.text, headers)


async def sandbox_request(case: str, port: int, embedded: Embedded) -> NullOutcome:
    """One request of `case` from a host sandbox's origin (`SANDBOX`) to the server on `port`."""
    if case.endswith("websocket"):
        client_id = embedded.booted_client_id if case.startswith("booted") else embedded.client_id
        return await _websocket(port, _socket_path("websocket", client_id), SANDBOX)
    headers = {"Origin": SANDBOX}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=_TIMEOUT, headers=headers) as client:
        if case == "static":
            response = await client.get(STATIC_PATH)
        elif case.endswith("polling"):
            client_id = embedded.booted_client_id if case.startswith("booted") else embedded.client_id
            response = await client.get(_socket_path("polling", client_id))
        elif case == "boot-without-ticket":
            response = await client.get("/_webapp/boot")
        elif case == "boot-bad-ticket":
            response = await client.get("/_webapp/boot", params={"ticket": "x" * 43})
        elif case == "embedded-page":
            response = await client.get(f"/counter?key={embedded.key}&embed=1")
        elif case == "viewer":
            response = await client.get("/viewer")
        else:
            raise ValueError(f"unknown case {case!r}")
        headers = {name.lower(): value for name, value in response.headers.items()}
        return NullOutcome(response.status_code, response.text, headers)


async def _websocket(port: int, path: str, origin: str = "null") -> NullOutcome:
    try:
        async with connect(
            f"ws://127.0.0.1:{port}{path}", origin=Origin(origin), proxy=None, open_timeout=_TIMEOUT
        ) as socket:
            first = await socket.recv()
            return NullOutcome(101, first if isinstance(first, str) else first.decode())
    except websockets.InvalidStatus as refused:
        return NullOutcome(refused.response.status_code, refused.response.body.decode(errors="replace"))
