"""Every open view as the resource `webapp://views/{view}` (application/json): what its app's classmethod
`resource(data)` makes of the view's saved data, read by any worker without its tab, by the callers who could route a
call to the view (anyone else reads it as not found). A 2025 session subscribed to it hears of a change of its data,
at most once a second."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import mcp_types

from webapp.bridge.dispatch import Bridge
from webapp.bridge.record import ViewRecord
from webapp.tools.resources import Resource, ResourceNotFound

__all__ = ["RESOURCE_HOOK", "VIEW_TEMPLATE", "ViewResources", "view_uri"]

VIEW_TEMPLATE = "webapp://views/{view}"
RESOURCE_HOOK = "resource"
"""The app class's classmethod `resource(data) -> JSON-able` that makes a view's resource from its saved data."""
_QUIET = 1.0  # seconds between two notifications of one view's change


def view_uri(view: ViewRecord) -> str:
    return VIEW_TEMPLATE.replace("{view}", view.handle)


class _Bridges(Protocol):
    @property
    def bridges(self) -> Sequence[Bridge]: ...


class ViewResources:
    """The `webapp://views/{view}` template of a server's views (every bridge's), and their change notifications."""

    def __init__(
        self, server: _Bridges, notify: Callable[[str], Awaitable[None]], subscribed: Callable[[str], bool]
    ) -> None:
        """`notify(uri)` tells the subscribers of `uri`; `subscribed(uri)`: whether it has any."""
        self._server = server
        self._notify = notify
        self._subscribed = subscribed
        self._last: dict[str, float] = {}  # a view's URI: when subscribers were last told
        self._due: set[str] = set()  # URIs whose notification waits for the quiet time

    def resource(self) -> Resource:
        return Resource(
            VIEW_TEMPLATE,
            name="view",
            description="An open view: what it shows the agent (its app's fields), as JSON",
            mime_type="application/json",
            handler=self.read,
            listing=self.listed,
        )

    async def listed(self, ctx: Any) -> list[mcp_types.Resource]:
        """The open views the caller would route a call to (its session's newest, its own or the unbound ones)."""
        listed: dict[str, mcp_types.Resource] = {}
        for bridge in self._server.bridges:
            for name, app in bridge.apps.items():
                if getattr(app.cls, RESOURCE_HOOK, None) is None:
                    continue
                newest = bridge.router.of_session(name, ctx.caller)
                for view in ([newest] if newest is not None else []) + bridge.router.candidates(name, ctx.caller):
                    if view.is_open:
                        listed[view.handle] = mcp_types.Resource(
                            uri=view_uri(view), name=f"{name} view", mime_type="application/json",
                            description=f"The open {name} view: what it shows the agent, as JSON",
                        )  # fmt: skip
        return list(listed.values())

    async def read(self, view: str, ctx: Any) -> dict[str, Any]:
        for bridge in self._server.bridges:
            record = bridge.registry.by_handle(view) or await bridge.registry.lookup(view)
            if record is None or not record.is_open or not bridge.router.may_use(ctx.caller, record):
                continue
            hook = getattr(bridge.apps[record.app].cls, RESOURCE_HOOK, None)
            if hook is None:
                break
            return {"app": record.app, "state": str(record.state)} | hook(dict(record.data))
        raise ResourceNotFound(view)

    def changed(self, view: ViewRecord) -> None:
        """The view's data changed: tell its subscribers now, or once the quiet time since the last time is over."""
        uri, now = view_uri(view), time.monotonic()
        if uri in self._due or not self._subscribed(uri):
            return
        self._last = {told: at for told, at in self._last.items() if now - at < _QUIET}
        wait = self._last.get(uri, 0.0) + _QUIET - now
        self._due.add(uri)
        asyncio.get_running_loop().call_later(max(wait, 0.0), lambda: asyncio.ensure_future(self._tell(uri)))

    async def _tell(self, uri: str) -> None:
        self._due.discard(uri)
        self._last[uri] = time.monotonic()
        await self._notify(uri)
