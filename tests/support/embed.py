"""Shared by the MCP Apps tests: an MCP client that advertises the extension, a low-stock item of the demo data, and
the inventory server with a test host page served beside it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Sequence
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import pytest
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from actions.store import SqlInventoryStore
from tests.support.e2e import RunningServer, run_server
from tests.views.inventory.support import INVENTORY_APP

__all__ = ["APPS_CLIENT", "Hosted", "low_stock_sku", "serve_hosted"]

H = TypeVar("H")

APPS_CLIENT = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
"""Pass in `Client(..., extensions=[APPS_CLIENT])`: the client says it can show MCP Apps."""


def low_stock_sku(db: Path, warehouse: str) -> str:
    """The first SKU below its reorder point in `warehouse` (read from the inventory database file)."""
    store = SqlInventoryStore(db)
    with closing(store):
        return next(row.sku for row in store.list_stock(warehouse) if row.low_stock)


@dataclass(frozen=True)
class Hosted(Generic[H]):
    """The inventory server, its database file and the host page served beside it (what its server yielded)."""

    server: RunningServer
    db: Path
    host: H


@contextlib.contextmanager
def serve_hosted(
    folders: pytest.TempPathFactory, timings: Sequence[str], host: Callable[[Path], AbstractContextManager[H]]
) -> Generator[Hosted[H]]:
    """Run the inventory app with `timings` on a fresh database and serve `host` from a folder of its own."""
    db = folders.mktemp("hosted") / "inventory.db"
    with run_server(*timings, app=INVENTORY_APP, db=db) as server, host(folders.mktemp("host")) as served:
        yield Hosted(server, db, served)
