"""Logging for `webapp serve`: everything to stderr as text or one JSON object per line, secrets masked (in the
message, the exception text and, in JSON, every field), no query strings (attach keys travel in `?key=`, NiceGUI
client ids in the socket's `?client_id=`), access and socket lines only at debug level, and one line per finished
call (`log_call`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal, cast

import mcp_types
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter

from webapp.calllog.masking import Masker, mask_secret
from webapp.calllog.outcome import outcome_code
from webapp.core.tracing import current_trace_id
from webapp.tools.once import CALL_ID

__all__ = ["CALLS_LOGGER", "AccessLogFilter", "JsonLogFormatter", "SecretLogFilter", "log_call", "logging_config"]

CALLS_LOGGER = "webapp.calls"
"""The logger of the call lines."""

_HEX_ID = re.compile(r"\b[0-9a-f]{32}\b")  # the SDK's session ids (uuid4 hex), which it logs at info level
_WEBSOCKET_LINE = '%s - "WebSocket %s"'  # uvicorn's websocket handshake lines (logger uvicorn.error): client, path
_ASSET_PATHS = ("/_nicegui/",)  # NiceGUI's static files and components: a line each per page load
_STARTUP_CHATTER = ("Started server process", "Waiting for application startup", "Application startup complete")
_TRACEBACKS = logging.Formatter()  # formats a record's exception the way every text formatter would
_UNMASKED_HEX = frozenset({"trace_id"})  # fields whose 32 hex digits are no session id
_calls = logging.getLogger(CALLS_LOGGER)


def _masked(masker: Masker, text: str, *, hex_ids: bool = True) -> str:
    """`text` with the registered secrets masked, and (with `hex_ids`) every session-id-like hex string."""
    text = masker.text(text)
    return _HEX_ID.sub(lambda match: mask_secret(match.group(0)), text) if hex_ids else text


class SecretLogFilter(logging.Filter):
    """Masks registered secrets and session-id-like hex strings in a log record's message, its exception text and
    its stack; `quiet` (every level above debug) drops websocket handshake lines and uvicorn's start-up chatter."""

    def __init__(self, masker: Masker | None = None, *, quiet: bool = False) -> None:
        super().__init__()
        self.masker = masker if masker is not None else Masker()  # an empty one is falsy, and fills later
        self.quiet = quiet

    def mask(self, text: str) -> str:
        return _masked(self.masker, text)

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
            record.__dict__.pop("color_message", None)  # uvicorn's coloured copy of the message, formatted apart
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)  # the cache every text formatter reads
        if record.exc_text:
            record.exc_text = self.mask(record.exc_text)
        if record.stack_info:
            record.stack_info = self.mask(record.stack_info)
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


class JsonLogFormatter(JsonFormatter):
    """One JSON object per line: `time`, `level`, `logger`, `message`, `worker` (with `--worker-id`), the fields
    the line carries (a call line's `tool`, `outcome`, `duration_ms`, `call_id`, `view`, `trace_id`) and `exc_info`;
    every field and key masked like a text line's message, whatever a filter did before."""

    def __init__(self, masker: Masker | None = None, worker: str | None = None) -> None:
        super().__init__(
            ["levelname", "name", "message"],
            rename_fields={"levelname": "level", "name": "logger"},
            static_fields={"worker": worker} if worker else None,
            reserved_attrs=[*RESERVED_ATTRS, "color_message"],
            timestamp="time",
        )
        self.masker = masker if masker is not None else Masker()  # an empty one is falsy, and fills later

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        when = log_data.pop("time", None)
        fields = {key: self._value(value, key in _UNMASKED_HEX) for key, value in log_data.items()}
        shown = when.isoformat(timespec="milliseconds") if isinstance(when, datetime) else self._value(when, False)
        return {"time": shown, **{self._text(str(key), False): value for key, value in fields.items()}}

    def _value(self, value: Any, hex_ids_shown: bool) -> Any:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, Mapping):
            items = cast(Mapping[Any, Any], value).items()
            return {self._text(str(key), False): self._value(item, False) for key, item in items}
        if isinstance(value, list | tuple | set | frozenset):
            return [self._value(item, False) for item in cast(Any, value)]
        return self._text(value if isinstance(value, str) else str(value), hex_ids_shown)

    def _text(self, text: str, hex_ids_shown: bool) -> str:
        return _masked(self.masker, text, hex_ids=not hex_ids_shown)


def log_call(
    tool: str,
    result: mcp_types.CallToolResult,
    *,
    duration: float,
    arguments: Mapping[str, Any] | None,
    worker: str | None,
    view: str | None = None,
    level: int = logging.INFO,
) -> None:
    """The line of one finished call (logger `webapp.calls`): the tool, its outcome code, the duration, the caller's
    `_call_id`, this worker, the view's masked handle prefix (`view`, as the call log shows it) and the trace id when
    traced; the same fields are the line's own in JSON. `level` DEBUG for a view's plumbing (its app-only calls)."""
    if not _calls.isEnabledFor(level):
        return
    call_id = (arguments or {}).get(CALL_ID)
    fields: dict[str, Any] = {
        "tool": _printable(tool),
        "outcome": outcome_code(result),
        "duration_ms": round(duration * 1000, 1),
        "call_id": _printable(call_id) if isinstance(call_id, str) else None,
        "worker": worker,
        "view": view,
        "trace_id": current_trace_id(),
    }
    shown = {"view": view, "call_id": fields["call_id"], "worker": worker}
    tail = "".join(f" {name}={value}" for name, value in shown.items() if value)
    if fields["trace_id"]:  # 0x-prefixed, as the console exporter shows it (a bare one would pass for a session id)
        tail += f" trace=0x{fields['trace_id']}"
    message = "call %s %s %.1f ms%s"
    _calls.log(level, message, fields["tool"], fields["outcome"], fields["duration_ms"], tail, extra=fields)


def _printable(value: str, limit: int = 64) -> str:
    """A caller's string as one short log word: cut, and quoted with escapes when it has control characters."""
    value = value[:limit]
    return value if value.isprintable() and " " not in value else repr(value)


def logging_config(
    level: str, masker: Masker, *, log_format: Literal["text", "json"] = "text", worker: str | None = None
) -> dict[str, Any]:
    """`logging.config.dictConfig` configuration (also handed to uvicorn): everything to stderr, secrets masked; as
    text or (`log_format="json"`) one JSON object per line naming `worker`."""
    level = level.upper()
    numeric = logging.getLevelNamesMapping().get(level, logging.INFO)
    sdk_level = "WARNING" if logging.DEBUG < numeric < logging.WARNING else level  # the SDK logs session ids at info
    json_lines = {"()": JsonLogFormatter, "masker": masker, "worker": worker}
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
        }
        if log_format == "text"
        else {"default": json_lines, "access": dict(json_lines)},
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
