"""webapp: a web app server with live MCP views — NiceGUI views that agents drive over MCP."""

from webapp.apps import AppDefinitionError, Host, HostError, McpAppUpdateEvent, ViewContext, mcp_app, mcp_app_action
from webapp.bridge import install_apps
from webapp.core import DATABASE_ERRORS, CallContext, Database, open_database
from webapp.events import AppEvents, Event, EventHandler, JsonValue, Subscription
from webapp.responses import (
    BuiltResult,
    ErrorBuilder,
    Presenter,
    PresenterSealedError,
    PresenterValidationError,
    ResponseBuilder,
    Suggestion,
    UiBlock,
    error,
    error_builder,
    required,
    response,
    success,
    success_structured,
    tool_error,
    toon_success,
    ui,
)
from webapp.server import WebApp
from webapp.tools import Action, Tool, ToolRegistry, wrap_result
from webapp.viewer import install_viewer, viewer_url

__all__ = [
    "DATABASE_ERRORS",
    "Action",
    "AppDefinitionError",
    "AppEvents",
    "BuiltResult",
    "CallContext",
    "Database",
    "ErrorBuilder",
    "Event",
    "EventHandler",
    "Host",
    "HostError",
    "JsonValue",
    "McpAppUpdateEvent",
    "Presenter",
    "PresenterSealedError",
    "PresenterValidationError",
    "ResponseBuilder",
    "Subscription",
    "Suggestion",
    "Tool",
    "ToolRegistry",
    "UiBlock",
    "ViewContext",
    "WebApp",
    "error",
    "error_builder",
    "install_apps",
    "install_viewer",
    "mcp_app",
    "mcp_app_action",
    "open_database",
    "required",
    "response",
    "success",
    "success_structured",
    "tool_error",
    "toon_success",
    "ui",
    "viewer_url",
    "wrap_result",
]
