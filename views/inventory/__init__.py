"""The inventory app: `build(webapp)` is the default `--app` factory (`views.inventory:build`).

It opens the inventory database (`--db`, shared with the framework's tables), serves the `/inventory` view with
its `inventory_*` tools, and adds the plain `warehouses` tool.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from nicegui import ui

from actions.store import InventoryStore, SqlInventoryStore
from actions.warehouses_tool import warehouses_tool
from views.inventory.page import InventoryView
from views.inventory.services import InventoryServices, TabInfo
from webapp import AppEvents, WebApp, install_apps, install_viewer, viewer_url

__all__ = ["BridgeTabs", "InventoryView", "build", "inventory_view"]


def inventory_view(store: InventoryStore, events: AppEvents, tabs: TabInfo | None = None) -> type[InventoryView]:
    """The view class for one server: `InventoryView` with its store, the app events its store publishes to (and
    what it may learn about its tab) bound."""
    services = InventoryServices(store, events) if tabs is None else InventoryServices(store, events, tabs)
    return type("InventoryView", (InventoryView,), {"services": services, "__module__": InventoryView.__module__})


class BridgeTabs:
    """Tells a view being built about its own tab, from the bridge's views (set `views` once the bridge exists)."""

    def __init__(self, views: Iterable[Any] = ()) -> None:
        self.views = views

    def _current(self) -> Any:
        client = ui.context.client
        return next((view for view in self.views if getattr(view, "client", None) is client), None)

    def viewer_link(self) -> str | None:
        view = self._current()
        return viewer_url(str(view.handle)) if view is not None else viewer_url()

    def opened_by_agent(self) -> bool:
        return bool(getattr(self._current(), "bound", False))


def build(webapp: WebApp) -> None:
    """Add the inventory app, the `warehouses` tool and the views' entries in the call-log viewer to `webapp`."""
    store = SqlInventoryStore(webapp.settings.db, events=webapp.events)
    webapp.on_shutdown(store.close)
    webapp.add_tool(warehouses_tool(store))
    tabs = BridgeTabs()
    bridge = install_apps(webapp, inventory_view(store, webapp.events, tabs))
    tabs.views = bridge.registry
    install_viewer(webapp, views=bridge.registry)
