"""MCP apps: `@mcp_app` and `@mcp_app_action`, the update event, naming and the startup checks, and the `Host`
Protocol through which a view shown inline in an MCP Apps host reaches that host."""

from webapp.apps.definition import (
    ACTION_MARK,
    APP_MARK,
    INPUT_CHECK,
    OBSERVER,
    ActionDefinition,
    ActionMark,
    AppDefinition,
    AppDefinitionError,
    AppMark,
    McpAppUpdateEvent,
    ViewContext,
    mcp_app,
    mcp_app_action,
)
from webapp.apps.host import DisplayMode, Host, HostError, HostErrorCode, HostEvent, HostHandler
from webapp.apps.naming import TOOL_NAME, app_name, check_claims, collect_app, snake_case

__all__ = [
    "ACTION_MARK",
    "APP_MARK",
    "INPUT_CHECK",
    "OBSERVER",
    "TOOL_NAME",
    "ActionDefinition",
    "ActionMark",
    "AppDefinition",
    "AppDefinitionError",
    "AppMark",
    "DisplayMode",
    "Host",
    "HostError",
    "HostErrorCode",
    "HostEvent",
    "HostHandler",
    "McpAppUpdateEvent",
    "ViewContext",
    "app_name",
    "check_claims",
    "collect_app",
    "mcp_app",
    "mcp_app_action",
    "snake_case",
]
