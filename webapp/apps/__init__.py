"""MCP apps: `@mcp_app` and `@mcp_app_action`, the update event, naming and the startup checks."""

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
    "McpAppUpdateEvent",
    "ViewContext",
    "app_name",
    "check_claims",
    "collect_app",
    "mcp_app",
    "mcp_app_action",
    "snake_case",
]
