"""The context handed to every tool call: who calls, over which protocol, how to report progress.

A leaf module: it imports neither NiceGUI nor MCP, so every layer can depend on it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["STDIO", "CallContext", "Caller", "LogSender", "Outcome", "ProgressReporter", "no_log", "no_progress"]

STDIO = "stdio"
"""Protocol name and session id of callers on the stdio transport."""

ProgressReporter = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""`await report_progress(progress, total, message)`: sends MCP progress when the caller asked for it."""


async def no_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    """A progress reporter that reports nothing (for calls made outside MCP, e.g. in tests)."""


LogSender = Callable[[str, Any, "str | None"], Awaitable[None]]
"""`await send_log(level, data, logger)`: sends the caller an MCP log message when its level lets it through."""


async def no_log(level: str, data: Any, logger: str | None = None) -> None:
    """A log sender that sends nothing (calls made outside MCP)."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling.

    `principal` is the authenticated principal (None while auth is off); `session_id` the legacy
    `Mcp-Session-Id` (the constant `"stdio"` on stdio, None for sessionless 2026-07-28 callers);
    `protocol` the negotiated protocol version (`"2025-11-25"`, `"2026-07-28"`, ...) or `"stdio"`; `apps` whether
    the client negotiated the MCP Apps extension (it can show views inline).
    """

    principal: str | None
    session_id: str | None
    protocol: str
    apps: bool = False

    @property
    def is_sessionless(self) -> bool:
        return self.session_id is None


class Outcome(Protocol):
    """A call with a `_call_id` (`ctx.outcome`): the framework keeps its result under (principal, tool, call id), so a
    retry gets that result instead of acting again. A handler that writes to the app's database calls `store` inside
    its write transaction, with the value it is about to return: the outcome then commits (or rolls back) with the
    change. Storing fails (and so rolls the transaction back) when a retry took the call over meanwhile."""

    def store(self, db: Any, value: object) -> None:
        """Keep `value` (the handler's return value) as this call's outcome, on `db` (the app's `Database`, inside
        the handler's transaction)."""
        ...


@dataclass(frozen=True, slots=True)
class CallContext:
    """One tool call: the caller, the tool name, progress reporting, the base URL for view links, and the
    caller's `_call_id` (action tools only, None when not sent): repeats of one call carry the same id.

    With several workers: `arguments` are the call's arguments as sent (a worker forwards them to the worker
    holding the view), and `target` is set on a forwarded call: the digest of the view it must reach, with `claim`,
    the claim on its `_call_id` the forwarding worker holds.

    `outcome` is set on calls of action tools that carry a `_call_id` (see `Outcome`); `present`, set by the tools
    layer, turns the handler's value into the call's result as the tool would (a bridge applies it while the view's
    tab applies the call's change, and the tool passes the result on unchanged)."""

    caller: Caller
    tool: str
    report_progress: ProgressReporter = field(default=no_progress, compare=False, repr=False)
    base_url: str = ""
    call_id: str | None = None
    arguments: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    target: str | None = None
    claim: str | None = None
    outcome: Outcome | None = field(default=None, compare=False, repr=False)
    present: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    send_log: LogSender = field(default=no_log, compare=False, repr=False)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send the caller a log message: `level` is one of MCP's (`debug`, `info`, `notice`, `warning`, `error`,
        `critical`, `alert`, `emergency`), `data` any JSON-able value. It goes out when the caller asked for that
        level (`logging/setLevel` in a 2025 session, the request's log level in 2026); never the server's own logs."""
        await self.send_log(level, data, logger)

    def url(self, path: str) -> str:
        """An absolute URL for `path` (which starts with `/`) under the server's base URL."""
        return self.base_url.rstrip("/") + path
