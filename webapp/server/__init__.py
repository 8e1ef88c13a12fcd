"""The composition root: `WebApp` (settings, tools, call log, MCP servers), its hosting in NiceGUI's app and on
stdio, logging, traces and the `webapp` command line."""

from webapp.server.cli import load_factory, main
from webapp.server.composition import Registry, WebApp, default_registry, internal_error
from webapp.server.hosting import MCP_PATH, StdioWire, claim_stdio, host_policy, install, reserve_port, serve
from webapp.server.logs import AccessLogFilter, JsonLogFormatter, SecretLogFilter, log_call, logging_config
from webapp.server.mcp_adapter import (
    SDKChangedError,
    connection_of,
    legacy_session_id,
    on_connection_closed,
    open_session_count,
)
from webapp.server.tracing import install_tracing

__all__ = [
    "MCP_PATH",
    "AccessLogFilter",
    "JsonLogFormatter",
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
    "install_tracing",
    "internal_error",
    "legacy_session_id",
    "load_factory",
    "log_call",
    "logging_config",
    "main",
    "on_connection_closed",
    "open_session_count",
    "reserve_port",
    "serve",
]
