"""Raw HTTP and websocket requests for the Host/Origin matrix: one function per route, any Host and Origin.

Every request goes to 127.0.0.1 on the server's port; the `Host` header is whatever the case says (or absent: then
the request is written by hand as HTTP/1.0 on a plain socket, since HTTP clients always send one).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from dataclasses import dataclass
from typing import Any

import httpx
import nicegui
import websockets
from websockets.asyncio.client import connect
from websockets.typing import Origin

__all__ = [
    "MCP_HEADERS",
    "ROUTES",
    "Outcome",
    "call_count",
    "open_session",
    "raw_request",
    "request",
]

ROUTES = ("mcp-post", "mcp-get", "mcp-delete", "page", "static", "sio-polling", "sio-websocket")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
STATIC_PATH = f"/_nicegui/{nicegui.__version__}/static/nicegui.css"
POLLING_PATH = "/_nicegui_ws/socket.io/?EIO=4&transport=polling"
WEBSOCKET_PATH = "/_nicegui_ws/socket.io/?EIO=4&transport=websocket"
_TIMEOUT = 10.0


@dataclass(frozen=True)
class Outcome:
    status: int
    body: str = ""


def _initialize(request_id: int = 1) -> dict[str, Any]:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def _call(name: str, request_id: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def _session_headers(session_id: str) -> dict[str, str]:
    return {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}


async def open_session(port: int, headers: dict[str, str] | None = None) -> str:
    """Open a legacy MCP session (initialize + initialized) with `headers` (Host, Origin, Authorization)."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=_TIMEOUT) as client:
        sent = {**MCP_HEADERS, **(headers or {})}
        response = await client.post("/mcp", json=_initialize(), headers=sent)
        assert response.status_code == 200, response.text
        session_id = response.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        done = await client.post("/mcp", json=initialized, headers={**sent, **_session_headers(session_id)})
        assert done.status_code == 202, done.text
        return session_id


async def call_count(port: int, session_id: str, headers: dict[str, str] | None = None) -> Outcome:
    """POST a `tools/call count` in the session."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=_TIMEOUT) as client:
        sent = {**MCP_HEADERS, **_session_headers(session_id), **(headers or {})}
        response = await client.post("/mcp", json=_call("count"), headers=sent)
        return Outcome(response.status_code, response.text)


async def request(route: str, port: int, headers: dict[str, str], session_id: str) -> Outcome:
    """One request of `route` with exactly these `Host`/`Origin` headers (plus what the route needs)."""
    if route == "sio-websocket":
        return await _websocket(port, headers)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=_TIMEOUT) as client:
        if route == "mcp-post":
            sent = {**MCP_HEADERS, **_session_headers(session_id), **headers}
            response = await client.post("/mcp", json=_call("count"), headers=sent)
        elif route == "mcp-get":
            sent = {"Accept": "text/event-stream", **_session_headers(session_id), **headers}
            async with client.stream("GET", "/mcp", headers=sent) as streamed:
                return Outcome(streamed.status_code, streamed.headers.get("content-type", ""))
        elif route == "mcp-delete":
            response = await client.delete("/mcp", headers={**_session_headers(session_id), **headers})
        elif route == "page":
            response = await client.get("/counted", headers=headers)
        elif route == "static":
            response = await client.get(STATIC_PATH, headers=headers)
        elif route == "sio-polling":
            response = await client.get(POLLING_PATH, headers=headers)
        else:
            raise ValueError(f"unknown route {route!r}")
        return Outcome(response.status_code, response.text)


async def _websocket(port: int, headers: dict[str, str]) -> Outcome:
    host = headers["Host"]
    origin = headers.get("Origin")
    uri = f"ws://{host}{WEBSOCKET_PATH}"
    try:
        async with connect(
            uri,
            origin=Origin(origin) if origin is not None else None,
            proxy=None,
            open_timeout=_TIMEOUT,
            host="127.0.0.1",
            port=port,
        ) as socket:
            first = await asyncio.wait_for(socket.recv(), _TIMEOUT)
            return Outcome(101, first if isinstance(first, str) else first.decode())
    except websockets.InvalidStatus as refused:
        return Outcome(refused.response.status_code, refused.response.body.decode(errors="replace"))


async def raw_request(route: str, port: int, origin: str | None, session_id: str) -> Outcome:
    """`route` written by hand without any Host header (HTTP/1.0; HTTP/1.1 for the websocket upgrade)."""
    lines: list[str]
    body = b""
    if route == "sio-websocket":
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [
            f"GET {WEBSOCKET_PATH} HTTP/1.1",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
    else:
        method, path, extra, body = _raw_parts(route, session_id)
        lines = [f"{method} {path} HTTP/1.0", *extra, f"Content-Length: {len(body)}"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), _TIMEOUT)
        rest = await asyncio.wait_for(reader.read(4096), _TIMEOUT)
    finally:
        writer.close()
    status = int(status_line.split()[1])
    return Outcome(status, rest.decode(errors="replace").split("\r\n\r\n", 1)[-1])


def _raw_parts(route: str, session_id: str) -> tuple[str, str, list[str], bytes]:
    session = [f"{name}: {value}" for name, value in _session_headers(session_id).items()]
    mcp = [f"{name}: {value}" for name, value in MCP_HEADERS.items()]
    if route == "mcp-post":
        return "POST", "/mcp", [*mcp, *session], json.dumps(_call("count")).encode()
    if route == "mcp-get":
        return "GET", "/mcp", ["Accept: text/event-stream", *session], b""
    if route == "mcp-delete":
        return "DELETE", "/mcp", session, b""
    paths = {"page": "/counted", "static": STATIC_PATH, "sio-polling": POLLING_PATH}
    return "GET", paths[route], [], b""
