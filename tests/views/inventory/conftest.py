"""Fixtures shared by the inventory end-to-end tests: one server with its database, one agent session, one tab.

Every test first reads the figures it is about to change, so tests do not depend on each other's order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, Page

from tests.support.e2e import RunningServer, run_server
from tests.views.inventory.support import INVENTORY_APP, OpenView, held_client, open_view


@pytest.fixture(scope="package")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("inventory") / "inventory.db"


@pytest.fixture(scope="package")
def server(db: Path) -> Iterator[RunningServer]:
    with run_server("--reconnect-grace", "2", app=INVENTORY_APP, db=db) as running:
        yield running


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def agent(server: RunningServer) -> AsyncIterator[Client]:
    """An agent with its own MCP session (2025-11-25): its calls reach its view without `_view`."""
    async with held_client(server.mcp_url) as client:
        yield client


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def tab(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        yield await context.new_page()
    finally:
        await context.close()


@pytest_asyncio.fixture(scope="package", loop_scope="session")
async def view(agent: Client, tab: Page) -> OpenView:
    return await open_view(agent, tab, warehouse_code="BER")
