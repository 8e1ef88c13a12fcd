"""The built-in viewer at `/viewer`: every MCP call, live and newest first, each result rendered from its wire text."""

from webapp.viewer.auth import COOKIE, SESSION_LIFETIME, Access, ViewerSessions, install_session_route, login_form
from webapp.viewer.blocks import (
    MARKDOWN_EXTRAS,
    MERMAID_CONFIG,
    display_order,
    json_tree,
    render_raw,
    render_result,
    sanitize_echarts,
)
from webapp.viewer.filters import Filters
from webapp.viewer.install import install_viewer
from webapp.viewer.page import LIST_LIMIT, ViewerPage, caller_label
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
    "MARKDOWN_EXTRAS",
    "MERMAID_CONFIG",
    "SESSION_LIFETIME",
    "VIEWER_PATH",
    "Access",
    "FieldSpec",
    "Filters",
    "FormError",
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
    "display_order",
    "install_session_route",
    "install_viewer",
    "json_tree",
    "login_form",
    "render_raw",
    "render_result",
    "sanitize_echarts",
    "schema_fields",
    "viewer_url",
]
