"""webapp: a web app server with live MCP views — NiceGUI views that agents drive over MCP.

The public names load on first use (PEP 562), so a script that only builds responses imports the wire and responses
layers, not NiceGUI and the MCP SDK's server.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from webapp.apps import (
        AppDefinitionError,
        Host,
        HostError,
        McpAppUpdateEvent,
        ViewContext,
        mcp_app,
        mcp_app_action,
        mcp_app_prompt,
    )
    from webapp.bridge import Island, install_apps
    from webapp.core import DATABASE_ERRORS, CallContext, Database, open_database
    from webapp.events import RESYNC, AppEvents, Event, EventHandler, JsonValue, Subscription
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
    from webapp.tools import Action, Prompt, Resource, ResourceNotFound, Tool, ToolRegistry, wrap_result
    from webapp.tools.asking import ElicitUrl
    from webapp.viewer import install_viewer, viewer_url

_HOMES = {  # the package each public name lives in
    "webapp.apps": ("AppDefinitionError", "Host", "HostError", "McpAppUpdateEvent", "ViewContext", "mcp_app",
                    "mcp_app_action", "mcp_app_prompt"),
    "webapp.bridge": ("Island", "install_apps"),
    "webapp.core": ("DATABASE_ERRORS", "CallContext", "Database", "open_database"),
    "webapp.events": ("RESYNC", "AppEvents", "Event", "EventHandler", "JsonValue", "Subscription"),
    "webapp.responses": ("BuiltResult", "ErrorBuilder", "Presenter", "PresenterSealedError",
                         "PresenterValidationError", "ResponseBuilder", "Suggestion", "UiBlock", "error",
                         "error_builder", "required", "response", "success", "success_structured", "tool_error",
                         "toon_success", "ui"),
    "webapp.server": ("WebApp",),
    "webapp.tools": ("Action", "Prompt", "Resource", "ResourceNotFound", "Tool", "ToolRegistry", "wrap_result"),
    "webapp.tools.asking": ("ElicitUrl",),  # loads the SDK's server helpers: only on first use
    "webapp.viewer": ("install_viewer", "viewer_url"),
}  # fmt: skip
_HOME = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "DATABASE_ERRORS",
    "RESYNC",
    "Action",
    "AppDefinitionError",
    "AppEvents",
    "BuiltResult",
    "CallContext",
    "Database",
    "ElicitUrl",
    "ErrorBuilder",
    "Event",
    "EventHandler",
    "Host",
    "HostError",
    "Island",
    "JsonValue",
    "McpAppUpdateEvent",
    "Presenter",
    "PresenterSealedError",
    "PresenterValidationError",
    "Prompt",
    "Resource",
    "ResourceNotFound",
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
    "mcp_app_prompt",
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


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'webapp' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # once loaded, a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
