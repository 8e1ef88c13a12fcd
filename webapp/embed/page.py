"""Embedded mode of a view page (`?key=…&embed=1`, apps.md §13): the head script and layout, the page's host, and
which `Origin: null` requests such a page may make (a frame in an opaque-origin sandbox sends that origin).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from urllib.parse import parse_qs

from nicegui import Client, ui
from starlette.types import Scope

from webapp.apps.definition import AppDefinition
from webapp.core.security import NullOriginGrant
from webapp.embed.host import EVENT, PageHost

__all__ = ["EmbeddedMode", "NullOrigins"]

_LAYOUT = """<style>
html, body { height: auto !important; min-height: 0 !important; }
.q-layout, .q-page-container, .q-page, .nicegui-layout { min-height: 0 !important; }
</style>"""
_HEAD = f"<script>{files('webapp.embed').joinpath('head.js').read_text(encoding='utf-8')}</script>\n{_LAYOUT}"
_BODY = '<script type="module">window.__webappBeforeApp();</script>'  # runs after nicegui.js, before the app
_READY = "window.__webappHost && window.__webappHost.ready()"


class EmbeddedMode:
    """Turns a page into an embedded one (the bridge's `Embedder`) and remembers which NiceGUI clients are embedded."""

    def __init__(self, *, timeout: float) -> None:
        self._timeout = timeout
        self.clients: set[str] = set()

    def __call__(self, client: Client, app: AppDefinition) -> PageHost:
        with client:
            ui.add_head_html(_HEAD)
            ui.add_body_html(_BODY)
        self.clients.add(client.id)
        client.on_delete(lambda: self.clients.discard(client.id))
        host = PageHost(client, timeout=self._timeout)
        client.layout.on(EVENT, host.receive)
        client.on_connect(lambda: client.run_javascript(_READY))  # from now on the page hands host messages over
        return host


class NullOrigins:
    """The `NullOriginRule` of embedded pages: NiceGUI's static assets (for anyone, as a CDN would serve them), the
    socket of an embedded client, and the reconnect check of a page with a valid key and `embed=1`."""

    def __init__(self, clients: set[str], valid_page: Callable[[str, str], bool]) -> None:
        self._clients = clients
        self._valid_page = valid_page  # (path, key) -> whether the key opens a view of the app at that path

    def __call__(self, scope: Scope) -> NullOriginGrant | None:
        path: str = scope.get("path", "")
        method = scope.get("method", "GET")
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        if path.startswith("/_nicegui_ws/"):
            client_id = query.get("client_id", [""])[0]
            return "pass" if client_id in self._clients else None
        if scope["type"] != "http" or method not in ("GET", "HEAD", "OPTIONS"):
            return None
        if path.startswith("/_nicegui/") and method != "OPTIONS":
            return "cors"
        key = query.get("key", [""])[0]
        if query.get("embed") == ["1"] and key and self._valid_page(path, key):
            return "cors"
        return None
