"""In-process MCP server behind the security middlewares, for tests of Host/Origin checks, bearer auth and limits.

`guarded_mcp()` runs the SDK's real `StreamableHTTPSessionManager` (legacy sessions and sessionless requests) with a
`tally` tool that counts its calls and reports the principal it saw, wrapped in `HostOriginGuard` and `BearerAuth`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp

from webapp.core.auth import PRINCIPAL_SCOPE_KEY, BearerAuth
from webapp.core.security import HostOriginGuard, HostPolicy

__all__ = ["HOST", "ORIGIN", "URL", "GuardedMcp", "Tally", "guarded_mcp", "initialize_body"]

HOST = "127.0.0.1:8123"
ORIGIN = "http://127.0.0.1:8123"
URL = f"http://{HOST}/mcp"
_LOOPBACK = ("127.0.0.1:8123", "localhost:8123", "[::1]:8123")


@dataclass
class Tally:
    """Every call of the `tally` tool: the principal found in the request's ASGI scope (None without auth)."""

    principals: list[str | None] = field(default_factory=lambda: [])

    @property
    def count(self) -> int:
        return len(self.principals)


def tally_server(tally: Tally) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        schema: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}}
        return mcp_types.ListToolsResult(
            tools=[mcp_types.Tool(name="tally", description="Counts.", input_schema=schema)]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        scope: Mapping[str, Any] = getattr(ctx.request, "scope", None) or {}
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        tally.principals.append(principal)
        text = str((params.arguments or {}).get("text", ""))
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=f"{tally.count}:{len(text)}")],
            structured_content={"count": tally.count, "principal": principal, "length": len(text)},
        )

    return Server("tally", on_list_tools=list_tools, on_call_tool=call_tool)


@dataclass
class GuardedMcp:
    app: ASGIApp
    tally: Tally
    manager: StreamableHTTPSessionManager
    auth: BearerAuth

    def http(self, headers: Mapping[str, str] | None = None) -> httpx2.AsyncClient:
        """An httpx2 client talking to the app in process, with `Host: 127.0.0.1:8123` unless `headers` say else."""
        return httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=self.app), base_url=f"http://{HOST}", headers=dict(headers or {})
        )

    def client(
        self, token: str | None = None, *, mode: Literal["auto", "legacy"] = "legacy", headers: Mapping[str, str] = {}
    ) -> Client:
        """The official MCP client over `http()`, sending `Authorization: Bearer token` when given."""
        sent = dict(headers)
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        return Client(streamable_http_client(URL, http_client=self.http(sent)), mode=mode)


@contextlib.asynccontextmanager
async def guarded_mcp(
    tokens: Mapping[str, str] | None = None,
    *,
    hosts: Sequence[str] = _LOOPBACK,
    origins: Sequence[str] = tuple(f"http://{h}" for h in _LOOPBACK),
    max_body: int = 1 << 20,
    idle_timeout: float = 1800.0,
) -> AsyncGenerator[GuardedMcp]:
    """The tally server at `/mcp` behind `HostOriginGuard(BearerAuth(...))`, its session manager running."""
    tally = Tally()
    security = TransportSecuritySettings(allowed_hosts=list(hosts), allowed_origins=list(origins))
    manager = StreamableHTTPSessionManager(
        tally_server(tally),
        security_settings=security,
        session_idle_timeout=idle_timeout,
        max_request_body_size=max_body,
    )
    inner = Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))])
    auth = BearerAuth(inner, tokens or {}, session_idle_timeout=idle_timeout)
    app = HostOriginGuard(auth, HostPolicy.of(hosts, origins))
    ready, stop = asyncio.Event(), asyncio.Event()

    async def hold() -> None:  # run() must be entered and exited in one task
        async with manager.run():
            ready.set()
            await stop.wait()

    holder = asyncio.create_task(hold())
    async with asyncio.timeout(10):
        await ready.wait()
    try:
        yield GuardedMcp(app=app, tally=tally, manager=manager, auth=auth)
    finally:
        stop.set()
        async with asyncio.timeout(10):
            await holder


def initialize_body(request_id: int = 1) -> dict[str, Any]:
    """A legacy (2025-11-25) `initialize` request."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
