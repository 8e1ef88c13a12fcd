"""The built-in viewer at `/viewer`: every MCP call, live and newest first, each result rendered from its wire text.

In local mode it shows every call; with bearer tokens configured it asks for a token once (a cookie keeps the
viewer session) and shows only that token's principal's calls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

import mcp_types
from fastapi import FastAPI, Request
from nicegui import Client, ui

from webapp.calllog import CallLog, CallRecord, mask_secret
from webapp.calllog_db import CallLogStore
from webapp.settings import Settings, is_loopback
from webapp.tools import ToolLike
from webapp.viewer_auth import COOKIE, Access, ViewerSessions, install_session_route, login_form
from webapp.viewer_page import ViewerPage
from webapp.viewer_try import ViewChoice, call_over_mcp

__all__ = [
    "VIEWER_PATH",
    "Access",
    "Filters",
    "ViewDirectory",
    "ViewLike",
    "Viewer",
    "ViewerHost",
    "install_viewer",
    "viewer_url",
]

log = logging.getLogger(__name__)
VIEWER_PATH = "/viewer"
_CSS_FILE = Path(__file__).resolve().parent.parent / "static" / "viewer.css"
_MASK_LEN = 6


class ViewLike(Protocol):
    @property
    def handle(self) -> str: ...
    @property
    def app(self) -> str: ...
    @property
    def principal(self) -> str | None: ...
    @property
    def is_open(self) -> bool: ...


class ViewDirectory(Protocol):
    """The open views (the bridge's view registry), to offer them for `_view` in "try a tool"."""

    def __iter__(self) -> Iterator[Any]: ...


class _Tools(Protocol):
    def tools(self) -> Sequence[ToolLike]: ...


class ViewerHost(Protocol):
    """What the viewer needs of the server (`webapp.server.WebApp`)."""

    settings: Settings
    calllog: CallLog
    port: int

    @property
    def registry(self) -> _Tools: ...
    def on_shutdown(self, hook: Callable[[], None]) -> object: ...


def viewer_url(
    view: str | None = None,
    *,
    tool: str | None = None,
    session: str | None = None,
    errors: bool = False,
    path: str = VIEWER_PATH,
) -> str:
    """A link to the viewer filtered to a view (the handle is cut to its masked prefix), a tool, a session."""
    query = Filters(tool=tool, view=view, session=session, errors=errors).query()
    return f"{path}?{query}" if query else path


def _prefix(value: str | None) -> str | None:
    if not value:
        return None
    value = value.removesuffix("…")[:_MASK_LEN]
    return value or None


@dataclass(frozen=True)
class Filters:
    """Which calls the list shows; `view` and `session` match by their masked 6-character prefix."""

    tool: str | None = None
    view: str | None = None
    session: str | None = None
    errors: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "view", _prefix(self.view))
        object.__setattr__(self, "session", _prefix(self.session))
        object.__setattr__(self, "tool", self.tool or None)

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> Filters:
        flag = params.get("errors", "").lower()
        return cls(
            tool=params.get("tool") or None,
            view=params.get("view"),
            session=params.get("session"),
            errors=flag in ("1", "true", "yes", "on"),
        )

    def query(self, call: int | None = None) -> str:
        items = {"tool": self.tool, "view": self.view, "session": self.session, "errors": "1" if self.errors else None}
        items["call"] = None if call is None else str(call)
        return urlencode({key: value for key, value in items.items() if value})

    def matches(self, record: CallRecord) -> bool:
        if self.tool and record.tool != self.tool:
            return False
        if self.errors and not record.is_error:
            return False
        if self.view and not (record.view or "").startswith(self.view):
            return False
        return not (self.session and not (record.session_id or "").startswith(self.session))


class Viewer:
    """The viewer of one server: its page, its login routes, its viewer sessions (cookie id → access)."""

    def __init__(self, host: ViewerHost, *, views: ViewDirectory | None = None, path: str = VIEWER_PATH) -> None:
        self.host = host
        self._views: list[ViewDirectory] = [] if views is None else [views]
        self.path = path
        self.sessions = ViewerSessions(host.settings.tokens)
        self.css = _CSS_FILE.read_text(encoding="utf-8") if _CSS_FILE.is_file() else ""

    @property
    def auth_on(self) -> bool:
        return self.sessions.enabled

    @property
    def mcp_url(self) -> str:
        """The server's own `/mcp`, reached over loopback when it listens there."""
        host = self.host.settings.host
        if host in ("0.0.0.0", "", "localhost") or (is_loopback(host) and ":" not in host):
            name = "127.0.0.1" if host in ("0.0.0.0", "", "localhost") else host
        elif host in ("::", "::1", "[::1]"):
            name = "[::1]"
        else:
            name = f"[{host}]" if ":" in host and not host.startswith("[") else host
        return f"http://{name}:{self.host.port}/mcp"

    # -- what a page needs --------------------------------------------------------------------------------------
    def tools(self) -> list[ToolLike]:
        try:
            return list(self.host.registry.tools())
        except Exception:
            log.exception("could not list the tools for the viewer")
            return []

    def add_views(self, views: ViewDirectory) -> None:
        """Offer the views of `views` (a bridge's view registry) for `_view` in "try a tool"."""
        if all(known is not views for known in self._views):
            self._views.append(views)

    def view_choices(self, access: Access) -> list[ViewChoice]:
        choices: list[ViewChoice] = []
        for view in (view for directory in self._views for view in directory):
            if view.is_open and (access.is_local or view.principal == access.principal):
                state = getattr(view, "state", "")
                label = f"{view.app} · {mask_secret(view.handle)}" + (f" · {state}" if state else "")
                choices.append(ViewChoice(handle=view.handle, label=label))
        return choices

    async def call(self, access: Access, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        return await call_over_mcp(self.mcp_url, tool, arguments, token=access.token)

    def links(self) -> list[str]:
        """The other pages of the server (e.g. `/inventory`), to link to from the viewer."""
        paths = {path for path in Client.page_routes.values() if path != self.path and "{" not in path}
        return sorted(paths)

    # -- routes -------------------------------------------------------------------------------------------------
    def install(self, app: FastAPI) -> None:
        """Register the page and its session route in NiceGUI's `app`."""

        @ui.page(self.path, title="Call viewer")
        def viewer_page(request: Request) -> None:  # pyright: ignore[reportUnusedFunction]
            params = dict(request.query_params)
            session = request.cookies.get(COOKIE)
            access = self.sessions.access(session)
            if self.css:
                ui.add_css(self.css)
            filters = Filters.from_query(params)
            if access is None:
                login_form(self.path, self.sessions, back=filters.query(), failed=params.get("login") == "failed")
                return
            call = params.get("call", "")
            page = ViewerPage(self, access, filters, int(call) if call.isdigit() else None)
            page.build(on_sign_out=None if access.is_local else lambda: self._sign_out(session))

        install_session_route(app, self.path, self.sessions)

    def _sign_out(self, session: str | None) -> None:
        self.sessions.end(session)
        ui.navigate.to(self.path)


def install_viewer(
    host: ViewerHost,
    app: FastAPI | None = None,
    *,
    views: ViewDirectory | None = None,
    store: CallLogStore | None = None,
    persist: bool = True,
    path: str = VIEWER_PATH,
) -> Viewer:
    """Add the viewer to a server: persist the call log in `--db` (unless `persist=False` or a `store` is given,
    which is then used), load its newest calls, and register `/viewer`. Call it before serving; calling it again
    for the same server returns the installed viewer."""
    if app is None:
        from nicegui import app as nicegui_app

        app = nicegui_app
    installed = getattr(app.state, "webapp_viewer", None)
    if isinstance(installed, Viewer) and installed.host is host:
        if views is not None:
            installed.add_views(views)
        return installed
    if store is None and persist:
        settings = host.settings
        store = CallLogStore(settings.db, keep=settings.call_log_keep, max_age=settings.call_log_max_age)
    if store is not None:
        store.open()
        store.attach(host.calllog)
        host.on_shutdown(store.close)
    viewer = Viewer(host, views=views, path=path)
    viewer.install(app)
    app.state.webapp_viewer = viewer
    return viewer
