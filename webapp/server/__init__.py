"""The composition root: `WebApp` (settings, tools, call log, MCP servers), its hosting in NiceGUI's app and on
stdio, logging and the `webapp` command line."""

from webapp.server.cli import load_factory, main
from webapp.server.composition import Registry, WebApp, default_registry, internal_error
from webapp.server.hosting import MCP_PATH, StdioWire, claim_stdio, host_policy, install, reserve_port, serve
from webapp.server.logs import AccessLogFilter, SecretLogFilter, logging_config
from webapp.server.mcp_adapter import (
    SDKChangedError,
    connection_of,
    legacy_session_id,
    on_connection_closed,
    open_session_count,
)

__all__ = [
    "MCP_PATH",
    "AccessLogFilter",
    "Registry",
    "SDKChangedError",
    "SecretLogFilter",
    "StdioWire",
    "WebApp",
    "claim_stdio",
    "connection_of",
    "default_registry",
    "host_policy",
    "install",
    "internal_error",
    "legacy_session_id",
    "load_factory",
    "logging_config",
    "main",
    "on_connection_closed",
    "open_session_count",
    "reserve_port",
    "serve",
]
