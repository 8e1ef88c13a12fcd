"""`webapp [serve] [options]`: parse the settings, build the app with its `--app` factory and serve it.

Logs go to stderr; neither uvicorn's access log nor its websocket lines show query strings (attach keys travel in
`?key=`, NiceGUI client ids in the socket's `?client_id=`), and known secrets (tokens, session ids, registered keys
and handles) are masked in every log line.
"""

from __future__ import annotations

import importlib
import logging
import logging.config
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

from webapp.calllog import Masker, mask_secret
from webapp.hosting import claim_stdio, serve
from webapp.server import WebApp
from webapp.settings import Settings, SettingsError, check_listen_address, parse_command_line
from webapp.viewer import install_viewer

__all__ = ["AccessLogFilter", "SecretLogFilter", "load_factory", "logging_config", "main"]

_HEX_ID = re.compile(r"\b[0-9a-f]{32}\b")  # the SDK's session ids (uuid4 hex), which it logs at info level
_WEBSOCKET_LINE = '%s - "WebSocket %s"'  # uvicorn's websocket handshake lines (logger uvicorn.error): client, path
log = logging.getLogger("webapp")


class SecretLogFilter(logging.Filter):
    """Masks registered secrets and session-id-like hex strings in a log record's message."""

    def __init__(self, masker: Masker | None = None) -> None:
        super().__init__()
        self.masker = masker or Masker()

    def mask(self, text: str) -> str:
        return _HEX_ID.sub(lambda match: mask_secret(match.group(0)), self.masker.text(text))

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "uvicorn.access":
            return True  # its arguments are formatted by the access formatter; AccessLogFilter handles it
        if _is_websocket_line(record):  # the socket's query string carries NiceGUI's client id and tab ids
            client, path, *rest = cast(tuple[Any, ...], record.args)
            record.args = (client, _path_only(path), *rest)
        message = record.getMessage()
        masked = self.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


class AccessLogFilter(SecretLogFilter):
    """Drops the query string from uvicorn access-log lines (and masks secrets in the path)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5:
            client, method, path, version, status = cast(tuple[Any, ...], args)
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
    quiet = "WARNING" if logging.DEBUG < numeric < logging.WARNING else level  # the SDK logs session ids at info
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "secrets": {"()": SecretLogFilter, "masker": masker},
            "access": {"()": AccessLogFilter, "masker": masker},
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
            "mcp": {"level": quiet},
            "httpx": {"level": quiet},
        },
    }


def load_factory(spec: str) -> Callable[[WebApp], object]:
    """The app factory named by `module:attribute`."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SettingsError(f"--app must look like 'module:attribute', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SettingsError(f"--app {spec!r}: cannot import module {module_name!r} ({error})") from error
    factory = getattr(module, attribute, None)
    if not callable(factory):
        raise SettingsError(f"--app {spec!r}: module {module_name!r} has no callable {attribute!r}")
    return cast(Callable[[WebApp], object], factory)


def main(argv: Sequence[str] | None = None) -> int:
    """The `webapp` console script."""
    try:
        settings: Settings = parse_command_line(sys.argv[1:] if argv is None else argv, os.environ)
        wire = claim_stdio() if settings.stdio else None
        webapp = WebApp(settings)
        config = logging_config(settings.log_level, webapp.calllog.masker)
        logging.config.dictConfig(config)
        check_listen_address(settings)
        install_viewer(webapp)  # first, so a factory that passes its views to install_viewer adds them
        load_factory(settings.app)(webapp)
        serve(webapp, stdio=wire, log_config=config)
    except SettingsError as error:
        print(f"webapp: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
