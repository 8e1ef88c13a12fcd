"""Shared by the MCP Apps tests: an MCP client that advertises the extension, and a low-stock item of the demo data."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from actions.store import SqlInventoryStore

__all__ = ["APPS_CLIENT", "low_stock_sku"]

APPS_CLIENT = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
"""Pass in `Client(..., extensions=[APPS_CLIENT])`: the client says it can show MCP Apps."""


def low_stock_sku(db: Path, warehouse: str) -> str:
    """The first SKU below its reorder point in `warehouse` (read from the inventory database file)."""
    store = SqlInventoryStore(db)
    with closing(store):
        return next(row.sku for row in store.list_stock(warehouse) if row.low_stock)
