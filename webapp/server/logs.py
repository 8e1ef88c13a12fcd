"""Logging for `webapp serve`: everything to stderr, secrets masked, no query strings (attach keys travel in `?key=`,
NiceGUI client ids in the socket's `?client_id=`), and access and socket lines only at debug level.
"""

from __future__ import annotations

import logging
import re
from typing import Any, cast

from webapp.calllog.masking import Masker, mask_secret

__all__ = ["AccessLogFilter", "SecretLogFilter", "logging_config"]

_HEX_ID = re.compile(r"\b[0-9a-f]{32}\b")  # the SDK's session ids (uuid4 hex), which it logs at info level
_WEBSOCKET_LINE = '%s - "WebSocket %s"'  # uvicorn's websocket handshake lines (logger uvicorn.error): client, path
_ASSET_PATHS = ("/_nicegui/",)  # NiceGUI's static files and components: a line each per page load
_STARTUP_CHATTER = ("Started server process", "Waiting for application startup", "Application startup complete")


class SecretLogFilter(logging.Filter):
    """Masks registered secrets and session-id-like hex strings in a log record's message; `quiet` (every level
    above debug) drops websocket handshake lines and uvicorn's start-up chatter."""

    def __init__(self, masker: Masker | None = None, *, quiet: bool = False) -> None:
        super().__init__()
        self.masker = masker or Masker()
        self.quiet = quiet

    def mask(self, text: str) -> str:
        return _HEX_ID.sub(lambda match: mask_secret(match.group(0)), self.masker.text(text))

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "uvicorn.access":
            return True  # its arguments are formatted by the access formatter; AccessLogFilter handles it
        if self.quiet and (_is_websocket_line(record) or str(record.msg).startswith(_STARTUP_CHATTER)):
            return False
        if _is_websocket_line(record):  # the socket's query string carries NiceGUI's client id and tab ids
            client, path, *rest = cast(tuple[Any, ...], record.args)
            record.args = (client, _path_only(path), *rest)
        message = record.getMessage()
        masked = self.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


class AccessLogFilter(SecretLogFilter):
    """Drops the query string from uvicorn access-log lines (and masks secrets in the path); `quiet` drops the
    lines of static assets."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5:
            client, method, path, version, status = cast(tuple[Any, ...], args)
            if self.quiet and str(path).startswith(_ASSET_PATHS):
                return False
            record.args = (client, method, self.mask(_path_only(path)), version, status)
        return True


def _is_websocket_line(record: logging.LogRecord) -> bool:
    msg, args = record.msg, record.args
    return isinstance(msg, str) and msg.startswith(_WEBSOCKET_LINE) and isinstance(args, tuple) and len(args) >= 2


def _path_only(path: object) -> str:
    return str(path).split("?", 1)[0]


def logging_config(level: str, masker: Masker) -> dict[str, Any]:
    """`logging.config.dictConfig` configuration (also handed to uvicorn): everything to stderr, secrets masked."""
    level = level.upper()
    numeric = logging.getLevelNamesMapping().get(level, logging.INFO)
    sdk_level = "WARNING" if logging.DEBUG < numeric < logging.WARNING else level  # the SDK logs session ids at info
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "secrets": {"()": SecretLogFilter, "masker": masker, "quiet": numeric > logging.DEBUG},
            "access": {"()": AccessLogFilter, "masker": masker, "quiet": numeric > logging.DEBUG},
        },
        "formatters": {
            "default": {"()": "uvicorn.logging.DefaultFormatter", "fmt": "%(levelprefix)s %(name)s: %(message)s"},
            "access": {
                "()": "uvicorn.logging.AccessFormatter",
                "fmt": '%(levelprefix)s %(client_addr)s - "%(request_line)s" %(status_code)s',
            },
        },
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "default",
                "filters": ["secrets"],
            },
            "access": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "access",
                "filters": ["access"],
            },
        },
        "root": {"handlers": ["default"], "level": level},
        "loggers": {
            "uvicorn": {"handlers": ["default"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["access"], "level": level, "propagate": False},
            "mcp": {"level": sdk_level},
            "httpx": {"level": sdk_level},
        },
    }
