"""Shared fixtures: a test server in a subprocess, and a headless Chromium (Playwright) browser and page.

Tests that use `browser` or `page` run in the session's event loop (the browser is session-scoped), so their
async fixtures must not be bound to a per-test loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, async_playwright

from tests.support.e2e import RunningServer, run_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
_BROWSER_FIXTURES = {"browser", "page"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not set(getattr(item, "fixturenames", ())) & _BROWSER_FIXTURES:
            continue
        marker = item.get_closest_marker("asyncio")
        if marker is None or not (marker.kwargs.get("loop_scope") or marker.kwargs.get("scope")):
            item.add_marker(pytest.mark.asyncio(loop_scope="session"), append=False)  # closest marker wins


@pytest.fixture(scope="module")
def test_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The test app (`tests.support.apps`) served by `python -m webapp` on a free port, shared by a module."""
    with run_server(db=tmp_path_factory.mktemp("server") / "test.db") as running:
        yield running


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest_asyncio.fixture(loop_scope="session")
async def page(browser: Browser) -> AsyncIterator[Page]:
    context = await browser.new_context()
    try:
        yield await context.new_page()
    finally:
        await context.close()
