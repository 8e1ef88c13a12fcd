"""webapp: a web app server with live MCP views — NiceGUI views that agents drive over MCP."""

from webapp import ui
from webapp.responses import (
    BuiltResult,
    ErrorBuilder,
    ResponseBuilder,
    Suggestion,
    error,
    error_builder,
    required,
    response,
    success,
    success_structured,
    tool_error,
)
from webapp.toon import toon_success
from webapp.ui import UiBlock

__all__ = [
    "BuiltResult",
    "ErrorBuilder",
    "ResponseBuilder",
    "Suggestion",
    "UiBlock",
    "error",
    "error_builder",
    "required",
    "response",
    "success",
    "success_structured",
    "tool_error",
    "toon_success",
    "ui",
]

from webapp.presenter import Presenter, PresenterSealedError, PresenterValidationError
from webapp.tools import Action, Tool, ToolRegistry, wrap_result

__all__ += [
    "Action",
    "Presenter",
    "PresenterSealedError",
    "PresenterValidationError",
    "Tool",
    "ToolRegistry",
    "wrap_result",
]

from webapp.apps import AppDefinitionError, McpAppUpdateEvent, ViewContext, mcp_app, mcp_app_action  # noqa: E402

__all__ += ["AppDefinitionError", "McpAppUpdateEvent", "ViewContext", "mcp_app", "mcp_app_action"]
