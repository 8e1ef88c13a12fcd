"""The built-in viewer at `/viewer`: every MCP call, live and newest first, each result rendered from its wire text."""

from webapp.viewer.auth import COOKIE, SESSION_LIFETIME, Access, ViewerSessions, install_session_route, login_form
from webapp.viewer.filters import Filters
from webapp.viewer.install import install_viewer
from webapp.viewer.page import LIST_LIMIT, ViewerPage, caller_label
from webapp.viewer.result_view import ResultView
from webapp.viewer.service import VIEWER_PATH, ViewDirectory, Viewer, ViewerHost, ViewLike, viewer_url
from webapp.viewer.try_panel import (
    FieldSpec,
    FormError,
    TryPanel,
    ViewChoice,
    call_over_mcp,
    collect_arguments,
    schema_fields,
)

__all__ = [
    "COOKIE",
    "LIST_LIMIT",
    "SESSION_LIFETIME",
    "VIEWER_PATH",
    "Access",
    "FieldSpec",
    "Filters",
    "FormError",
    "ResultView",
    "TryPanel",
    "ViewChoice",
    "ViewDirectory",
    "ViewLike",
    "Viewer",
    "ViewerHost",
    "ViewerPage",
    "ViewerSessions",
    "call_over_mcp",
    "caller_label",
    "collect_arguments",
    "install_session_route",
    "install_viewer",
    "login_form",
    "schema_fields",
    "viewer_url",
]
