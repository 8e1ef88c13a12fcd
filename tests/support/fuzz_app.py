"""App factories for the in-process servers of the fuzz, isolation and churn tests; each returns its bridge.

`counter_app`: the counter and notes apps of `tests.support.test_app` plus `ping`. `inventory_app`: the product's
inventory app with its `warehouses` tool, on the server's database.
"""

from __future__ import annotations

from actions.store import SqlInventoryStore
from actions.warehouses_tool import warehouses_tool
from tests.support.test_app import CounterView, NotesView
from views.inventory import inventory_view
from webapp.bridge.app_tools import install_apps
from webapp.bridge.dispatch import Bridge
from webapp.server.composition import WebApp
from webapp.tools.registry import Tool

__all__ = ["counter_app", "inventory_app"]


def counter_app(webapp: WebApp) -> Bridge:
    bridge = install_apps(webapp, CounterView, NotesView)
    webapp.add_tool(Tool("ping", description="Answers pong.", handler=lambda: "pong"))
    return bridge


def inventory_app(webapp: WebApp) -> Bridge:
    store = SqlInventoryStore(webapp.settings.db, events=webapp.events)
    webapp.on_shutdown(store.close)
    webapp.add_tool(warehouses_tool(store))
    return install_apps(webapp, inventory_view(store, webapp.events))
