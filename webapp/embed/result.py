"""The result widget `ui://webapp/result` (rendering.md §4): one self-contained page that MCP Apps hosts show under a
call of any tool that links it, drawing the result's presenter blocks (charts, tables, error cards) in the browser.

The page is built by `make` into `static/dist/widget.html`; the server only reads it, never builds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import mcp_types
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, ResourceCsp
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR

from webapp.core.static import static_dir
from webapp.tools.registry import RESULT_VIEW_URI, ToolLike, links_result_view

__all__ = ["WIDGET_BUNDLE", "ResultWidget"]

WIDGET_BUNDLE = "dist/widget.html"
"""The built widget (parser, renderer, libraries and styles inlined in one page), relative to the static folder."""
_CONFIG = '<script type="application/json" id="webapp-result-config">{}</script>'


class ResultWidget:
    """A `ResourceSource` for the server: lists `ui://webapp/result` while some tool links it, and reads the built
    page. It asks the host for no domains: everything it draws is in the page and the tool result."""

    extensions: Mapping[str, dict[str, Any]] = {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}

    def __init__(
        self,
        tools: Callable[[], Sequence[ToolLike]],
        base_url: Callable[[], str],
        *,
        domain: str | None,
        page: Path | None = None,
    ) -> None:
        self._tools = tools
        self._base_url = base_url
        self._domain = domain
        self._page = page or static_dir() / WIDGET_BUNDLE
        self._html: str | None = None
        self.viewer_path: str | None = None
        """Where the call viewer is served (`install_viewer` sets it): the page links Mermaid diagrams there."""

    def _meta(self) -> dict[str, Any]:
        ui: dict[str, Any] = {"csp": ResourceCsp().model_dump(by_alias=True, exclude_none=True), "prefersBorder": False}
        if self._domain is not None:
            ui["domain"] = self._domain
        empty: dict[str, list[str]] = {"connect_domains": [], "resource_domains": [], "frame_domains": []}
        return {"ui": ui, "openai/widgetCSP": empty, "openai/widgetPrefersBorder": False}

    def resources(self) -> Sequence[mcp_types.Resource]:
        if not any(links_result_view(tool) for tool in self._tools()):
            return []
        return [
            mcp_types.Resource(
                uri=RESULT_VIEW_URI,
                name="result view",
                title="Tool result",
                description="Shows a tool's result as its charts, tables and cards instead of its text.",
                mime_type=APP_MIME_TYPE,
                _meta=self._meta(),
            )
        ]

    def read(self, uri: str) -> mcp_types.ReadResourceResult | None:
        if uri != RESULT_VIEW_URI or not self.resources():
            return None
        content = mcp_types.TextResourceContents(uri=uri, mime_type=APP_MIME_TYPE, text=self.html(), _meta=self._meta())
        return mcp_types.ReadResourceResult(contents=[content])

    def html(self) -> str:
        """The built page (read once) with its settings; an MCP error that says how to build it when it is missing."""
        if self._html is None:
            try:
                self._html = self._page.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise MCPError(
                    INTERNAL_ERROR,
                    f"The result view is not built ({self._page} is missing). Fix: run `make run`, which builds it.",
                ) from None
        config = {"viewerUrl": self._base_url() + self.viewer_path if self.viewer_path is not None else None}
        text = json.dumps(config).replace("<", "\\u003c")  # never closes the script element
        return self._html.replace(_CONFIG, _CONFIG.replace("{}", text), 1)
