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
