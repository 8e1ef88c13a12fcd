"""Helpers for the bridge tests: MCP clients (optionally with a bearer token), result texts, the counter app's tools.

`COUNTER_APP` is the `--app` of `tests.support.test_app`; `FAST` are short durations for its server.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.e2e import RunningServer

__all__ = ["COUNTER_APP", "FAST", "attach_key", "connect", "not_open_text", "structured", "texts"]

COUNTER_APP = "tests.support.test_app:build"
FAST = ("--wait-for-live", "5", "--reconnect-grace", "1")


@contextlib.asynccontextmanager
async def connect(
    server: RunningServer, *, token: str | None = None, mode: Literal["auto", "legacy"] = "auto"
) -> AsyncGenerator[Client]:
    """An official MCP client for `server` (sessionless with `auto`, a 2025-11-25 session with `legacy`)."""
    if token is None:
        async with Client(server.mcp_url, mode=mode) as client:
            yield client
        return
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode) as client:
        yield client


def texts(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def structured(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, texts(result)
    assert result.structured_content is not None, texts(result)
    return dict(result.structured_content)


def attach_key(url: str) -> str:
    return parse_qs(urlsplit(url).query)["key"][0]


def not_open_text(app: str) -> str:
    return (
        '<tool_error code="VIEW_NOT_OPEN" severity="error">\n'
        f"<message>The view '{app}' is not open in this conversation. Call the tool '{app}' to open it.</message>\n"
        f"<recovery>Call '{app}' first, then retry this call.</recovery>\n"
        f"<available_actions>\n  <action>{app}</action>\n</available_actions>\n"
        "</tool_error>"
    )
