"""The one place that reaches into `mcp` SDK internals (pinned `mcp==2.3.*`); tests/test_server.py guards it.

mcp 2.3 has no public accessor for a request's legacy session id nor a public hook for "this session ended"
on the low-level `Server`'s request context; both live on the private per-connection object.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

__all__ = ["SDKChangedError", "connection_of", "legacy_session_id", "on_connection_closed", "open_session_count"]

_SESSION_HEADER = "mcp-session-id"
_CLOSE_HOOKED = "webapp.close_hooked"


class SDKChangedError(RuntimeError):
    """The installed `mcp` SDK no longer has the internals this adapter relies on."""


def connection_of(session: ServerSession) -> Connection:
    """The per-connection object behind a request's `ServerSession` (private attribute `_connection`)."""
    connection = getattr(session, "_connection", None)
    if not isinstance(connection, Connection):
        raise SDKChangedError(
            "mcp.server.session.ServerSession has no '_connection' Connection any more; "
            f"update webapp/mcp_adapter.py for mcp {_sdk_version()}"
        )
    return connection


def legacy_session_id(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The `Mcp-Session-Id` of a 2025-11-25 (or older) session; None on sessionless requests and stdio."""
    session_id = connection_of(ctx.session).session_id
    if session_id is None and ctx.request is not None:
        headers = getattr(ctx.request, "headers", None)  # the Starlette request, on HTTP
        if headers is not None:
            value = headers.get(_SESSION_HEADER)
            session_id = value if isinstance(value, str) and value else None
    return session_id


def on_connection_closed(ctx: ServerRequestContext[Any, Any], callback: Callable[[], Awaitable[None]]) -> bool:
    """Run `callback` once when the request's connection ends (DELETE, idle timeout, stdio EOF, shutdown).

    Registered at most once per connection; returns whether this call registered it. Sessionless requests get a
    connection per request, so the callback runs when that request is done.
    """
    connection = connection_of(ctx.session)
    if connection.state.get(_CLOSE_HOOKED):
        return False
    connection.state[_CLOSE_HOOKED] = True
    connection.exit_stack.push_async_callback(callback)
    return True


def open_session_count(manager: StreamableHTTPSessionManager) -> int:
    """How many legacy sessions the session manager holds now (private dict `_server_instances`)."""
    instances = getattr(manager, "_server_instances", None)
    if not isinstance(instances, dict):
        raise SDKChangedError(
            "mcp.server.streamable_http_manager.StreamableHTTPSessionManager has no '_server_instances' dict any "
            f"more; update webapp/mcp_adapter.py for mcp {_sdk_version()}"
        )
    return len(instances)  # pyright: ignore[reportUnknownArgumentType]


def _sdk_version() -> str:
    from importlib.metadata import version

    return version("mcp")
