"""The built-in viewer of one server: what its pages list (tools, views, other pages) and how it calls a tool.

In local mode it shows every call; with bearer tokens configured it asks for a token once (a cookie keeps the
viewer session) and shows only that token's principal's calls. A person signed in at the issuer holds no token for
`/mcp`: their "try a tool" calls run in process, as theirs, under the scope rules of `/mcp`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Protocol

import mcp_types
from nicegui import Client

from webapp.auth import Person
from webapp.calllog.masking import mask_secret
from webapp.calllog.memory import CallLog
from webapp.core.context import Caller
from webapp.core.settings import Settings, is_loopback
from webapp.core.static import static_dir
from webapp.embed.result import ResultWidget
from webapp.events import AppEvents
from webapp.responses.builder import framework_error
from webapp.tools.registry import ToolLike, app_only
from webapp.viewer.auth import Access, ViewerSessions
from webapp.viewer.filters import Filters
from webapp.viewer.try_panel import ViewChoice, call_over_mcp

__all__ = [
    "TRY_PROTOCOL",
    "VIEWER_PATH",
    "ViewDirectory",
    "ViewLike",
    "Viewer",
    "ViewerHost",
    "viewer_url",
]

log = logging.getLogger(__name__)
VIEWER_PATH = "/viewer"
TRY_PROTOCOL = "viewer"
"""The protocol recorded for a call a signed-in person made from "try a tool" (in process, not over `/mcp`)."""


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
    events: AppEvents
    port: int
    result_widget: ResultWidget

    @property
    def registry(self) -> _Tools: ...
    def on_startup(self, hook: Callable[[], Awaitable[None] | None]) -> object: ...
    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None]) -> object: ...
    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None, caller: Caller
    ) -> mcp_types.CallToolResult: ...


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


class Viewer:
    """The viewer of one server: its page, its login routes, its viewer sessions (cookie id → access)."""

    def __init__(self, host: ViewerHost, *, views: ViewDirectory | None = None, path: str = VIEWER_PATH) -> None:
        self.host = host
        self._views: list[ViewDirectory] = [] if views is None else [views]
        self.path = path
        self.sessions = ViewerSessions(host.settings.tokens)
        css_file = static_dir() / "viewer.css"
        self.css = css_file.read_text(encoding="utf-8") if css_file.is_file() else ""
        self.catch_up: Callable[[], Awaitable[object]] = _nothing
        """Reads every worker's newest calls into the log (several workers: they share calls only while watched)."""

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
    def scope(self) -> str | None:
        """Whose calls the page lists, said when there are several workers (None for one process)."""
        worker = self.host.calllog.worker
        return f"Calls of every worker · this page is served by {worker}" if worker else None

    def tools(self) -> list[ToolLike]:
        """The tools an agent may call (a view's own app-only plumbing is left out)."""
        try:
            return [tool for tool in self.host.registry.tools() if not app_only(tool)]
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
        if access.person is not None:
            return await self.call_as(access.person, tool, arguments)
        return await call_over_mcp(self.mcp_url, tool, arguments, token=access.token)

    async def call_as(self, person: Person, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call `tool` as the signed-in `person` with the rights of their own token: the server's call path (routing
        to the view's worker, the call log) under the scopes granted at sign-in, refused like `/mcp`'s 403 (nothing
        run, nothing recorded) when they lack one."""
        needed = person.lacks(tool)
        if needed:
            missing = [scope for scope in needed if scope not in person.scopes]
            scopes = {"needed": " ".join(needed), "missing": " ".join(missing)}
            return framework_error("INSUFFICIENT_SCOPE", details=scopes, tool=tool, **scopes)
        caller = Caller(principal=person.principal, session_id=None, protocol=TRY_PROTOCOL)
        # its own task: the tool runs outside this page's NiceGUI context, as a call over /mcp would
        return await asyncio.create_task(self.host.call_tool(tool, arguments, caller), name=f"try {tool}")

    def links(self) -> list[str]:
        """The other pages of the server (e.g. `/inventory`), to link to from the viewer."""
        paths = {path for path in Client.page_routes.values() if path != self.path and "{" not in path}
        return sorted(paths)


async def _nothing() -> None:
    pass
