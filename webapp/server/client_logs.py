"""Log messages to MCP clients (`ctx.log`): the level a 2025 session set with `logging/setLevel`, or the one a 2026
request carries in its `_meta`, decides what goes out; the server's own logs never do."""

from __future__ import annotations

import logging
from typing import Any, Final, get_args

import mcp_types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from webapp.core.context import LogSender

__all__ = ["DEFAULT_LEVEL", "LEVELS", "LogLevels"]

log = logging.getLogger(__name__)

LEVELS: Final[tuple[str, ...]] = get_args(mcp_types.LoggingLevel)
"""MCP's log levels, least severe first."""
DEFAULT_LEVEL: Final = "info"
"""What a 2025 session gets before it sets a level (a client that wants debug messages says so)."""


class LogLevels:
    """The level each 2025 session set, until it ends (`forget`)."""

    def __init__(self) -> None:
        self._levels: dict[str, str] = {}

    def set(self, session_id: str, level: str) -> None:
        self._levels[session_id] = level

    def forget(self, session_id: str) -> None:
        self._levels.pop(session_id, None)

    def minimum(self, ctx: ServerRequestContext[Any, Any], session_id: str | None) -> str | None:
        """The least severe level this request's log messages may have; None: none go out (a 2026 request that
        asked for none)."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            asked = (ctx.meta or {}).get(mcp_types.LOG_LEVEL_META_KEY)
            return asked if asked in LEVELS else None
        return self._levels.get(session_id or "", DEFAULT_LEVEL)

    def sender(self, ctx: ServerRequestContext[Any, Any], session_id: str | None) -> LogSender:
        """`ctx.log` of one request: sent on the request's own stream, when its level lets it through."""
        return _Sender(ctx, self.minimum(ctx, session_id))


class _Sender:
    """The log messages of one request; `minimum` goes with a call forwarded to another worker (it drops the rest)."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], minimum: str | None) -> None:
        self._ctx = ctx
        self.minimum = minimum

    async def __call__(self, level: str, data: Any, logger: str | None = None) -> None:
        if level not in LEVELS:
            raise ValueError(f"{level!r} is not an MCP log level; use one of {', '.join(LEVELS)}.")
        minimum = self.minimum
        if minimum is None or LEVELS.index(level) < LEVELS.index(minimum):
            return
        params = mcp_types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)  # type: ignore[arg-type]
        try:
            await self._ctx.session.send_notification(
                mcp_types.LoggingMessageNotification(params=params), related_request_id=self._ctx.request_id
            )
        except Exception:  # the client went away: its call goes on
            log.debug("a log message to the client was not delivered", exc_info=True)
