"""MCP apps: `@mcp_app`, `@mcp_app_action` and `@mcp_app_prompt`, the update event, naming and the startup checks,
and the `Host` Protocol through which a view shown inline in an MCP Apps host reaches that host."""

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
from webapp.apps.prompts import PROMPT_MARK, PromptMark, app_prompts, mcp_app_prompt

__all__ = [
    "ACTION_MARK",
    "APP_MARK",
    "INPUT_CHECK",
    "OBSERVER",
    "PROMPT_MARK",
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
    "PromptMark",
    "ViewContext",
    "app_name",
    "app_prompts",
    "check_claims",
    "collect_app",
    "mcp_app",
    "mcp_app_action",
    "mcp_app_prompt",
    "snake_case",
]
