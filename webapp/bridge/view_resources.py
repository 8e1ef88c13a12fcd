"""Every open view as the resource `webapp://views/{view}` (application/json): what its app's classmethod
`resource(data, db)` makes of the view's saved data and the server's database, read by any worker without its tab, by
the callers who could route a call to the view (anyone else reads it as not found). A 2025 session subscribed to it
hears of a change of its data, at most once a second, on any worker (`webapp.server.changes`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import mcp_types

from webapp.bridge.dispatch import Bridge
from webapp.bridge.record import ViewRecord
from webapp.core.sql import Database
from webapp.tools.resources import Resource, ResourceNotFound

__all__ = ["RESOURCE_HOOK", "VIEW_TEMPLATE", "ViewResources", "view_uri"]

VIEW_TEMPLATE = "webapp://views/{view}"
RESOURCE_HOOK = "resource"
"""The app class's classmethod `resource(data, db) -> JSON-able` that makes a view's resource from its saved data and
the server's database (`webapp.Database`, on `--db`; read on the event loop, as an action's transaction is)."""


def view_uri(view: ViewRecord) -> str:
    return VIEW_TEMPLATE.replace("{view}", view.handle)


class _Bridges(Protocol):
    @property
    def bridges(self) -> Sequence[Bridge]: ...


class ViewResources:
    """The `webapp://views/{view}` template of a server's views (every bridge's), and their change notifications."""

    def __init__(self, server: _Bridges, updated: Callable[[str], None], database: Callable[[], Database]) -> None:
        """`updated(uri)` tells the subscribers and listeners of `uri`, on any worker, at most once a second;
        `database()` is the server's database the apps' `resource` read."""
        self._server = server
        self._updated = updated
        self._database = database

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
            record = bridge.registry.by_handle(view)
            if record is None or not record.is_live:  # its tab is elsewhere (or nowhere): its saved data, read now
                record = await bridge.registry.lookup(view)
            if record is None or not record.is_open or not bridge.router.may_use(ctx.caller, record):
                continue
            hook = getattr(bridge.apps[record.app].cls, RESOURCE_HOOK, None)
            if hook is None:
                break
            return {"app": record.app, "state": str(record.state)} | hook(dict(record.data), self._database())
        raise ResourceNotFound(view)

    def changed(self, view: ViewRecord) -> None:
        """The view's data changed: its subscribers hear of it (now, or once the quiet time since the last is over)."""
        self._updated(view_uri(view))
