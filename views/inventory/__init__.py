"""The inventory app: `build(webapp)` is the default `--app` factory (`views.inventory:build`).

It opens the inventory database (`--db`, shared with the framework's tables), serves the `/inventory` view with
its `inventory_*` tools, and adds the plain `warehouses` tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlencode

from nicegui import ui

from actions.store import InventoryStore, SqliteInventoryStore
from actions.warehouses_tool import warehouses_tool
from views.inventory.page import InventoryServices, InventoryView, ViewerLink
from webapp.app_tools import install_apps
from webapp.server import WebApp

__all__ = ["InventoryView", "build", "inventory_view", "viewer_link"]

VIEWER_PATH = "/viewer"


def inventory_view(store: InventoryStore, link: ViewerLink | None = None) -> type[InventoryView]:
    """The view class for one server: `InventoryView` with `store` (and the call-log link) bound."""
    services = InventoryServices(store) if link is None else InventoryServices(store, link)
    return type("InventoryView", (InventoryView,), {"services": services, "__module__": InventoryView.__module__})


def viewer_link(views: Iterable[Any], path: str = VIEWER_PATH) -> ViewerLink:
    """A link to the viewer filtered to the view being built in the current tab (its handle's masked prefix)."""

    def link() -> str | None:
        client = ui.context.client
        for view in views:
            if getattr(view, "client", None) is client:
                return f"{path}?{urlencode({'view': str(view.handle)[:6]})}"
        return path

    return link


class _LateViews:
    """The bridge's views, known only once the bridge exists (it is built from the view class)."""

    def __init__(self) -> None:
        self.registry: Iterable[Any] = ()

    def __iter__(self) -> Iterator[Any]:
        return iter(self.registry)


def build(webapp: WebApp) -> None:
    """Add the inventory app and the `warehouses` tool to `webapp`."""
    store = SqliteInventoryStore(webapp.settings.db)
    webapp.on_shutdown(store.close)
    webapp.add_tool(warehouses_tool(store))
    views = _LateViews()
    bridge = install_apps(webapp, inventory_view(store, viewer_link(views)))
    views.registry = bridge.registry
