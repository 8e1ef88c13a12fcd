"""The live view inline where the host blocks nested frames (Claude): the shell boots the view page itself by a
one-time ticket, in a harness host with Claude's policy (host, sandbox and server on three origins).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, FrameLocator, Page, Request, expect

from tests.support.claude_host import ClaudeHost, serve_claude_host
from tests.support.e2e import RunningServer, run_server
from tests.support.embed import APPS_CLIENT, low_stock_sku
from tests.views.inventory.support import INVENTORY_APP, call, structured

TITLE = "The live inventory view"
TIMINGS = ("--reconnect-grace", "2", "--wait-for-live", "5", "--call-timeout", "3")


@dataclass
class Served:
    server: RunningServer
    db: Path
    claude: ClaudeHost


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    db = tmp_path_factory.mktemp("boot") / "inventory.db"
    with (
        run_server(*TIMINGS, app=INVENTORY_APP, db=db) as server,
        serve_claude_host(tmp_path_factory.mktemp("claude-host")) as claude,
    ):
        yield Served(server, db, claude)


@dataclass
class Harness:
    page: Page
    documents: list[str]  # every document request of any frame


@pytest_asyncio.fixture(loop_scope="session")
async def host(browser: Browser, served: Served) -> AsyncIterator[Harness]:
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        page = await context.new_page()
        documents: list[str] = []

        def seen(request: Request) -> None:
            if request.resource_type == "document":
                documents.append(request.url)

        page.on("request", seen)
        await page.goto(served.claude.url)
        yield Harness(page, documents)
    finally:
        await context.close()


async def show(harness: Harness, served: Served, agent: Client, *, opaque: bool = False) -> dict[str, Any]:
    """Call the opening tool as Claude's model would and render its resource under Claude's policy."""
    tool = next(tool for tool in (await agent.list_tools()).tools if tool.name == "inventory")
    assert tool.meta is not None
    resource = (await agent.read_resource(tool.meta["ui"]["resourceUri"])).contents[0]
    result = await call(agent, "inventory")
    shown = {
        "html": getattr(resource, "text", ""),
        "csp": (resource.meta or {})["ui"]["csp"],
        "input": {},
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        "sandboxOrigin": served.claude.sandbox_origin,
        "keepHttp": True,  # this server is plain http, which Claude would drop (the https case runs behind HAProxy)
        "opaque": opaque,
        "theme": "dark",
    }
    await harness.page.evaluate("shown => window.harness.show(shown)", shown)
    return {**structured(result), "meta": result.meta}


def view_in(harness: Harness, index: int) -> FrameLocator:
    sandbox = harness.page.frame_locator(f"iframe[data-index='{index}']")
    return sandbox.frame_locator("iframe").frame_locator(f"iframe[title='{TITLE}']")


async def test_the_shell_boots_the_view_where_the_host_blocks_its_frame(host: Harness, served: Served) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, served, agent)
        view = view_in(host, 0)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
        sku = low_stock_sku(served.db, "BER")
        await view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku).click()
        await host.page.wait_for_function(
            "sku => window.harness.received.contexts.some(c => c.content[0].text.includes(sku))", arg=sku
        )
    server = served.server.base_url
    assert [url for url in host.documents if url.startswith(server)] == []  # no frame ever loads the server's page
    ticket = opened["meta"]["webapp/view"]["ticket"]
    async with httpx.AsyncClient() as client:
        again = await client.get(f"{server}/_webapp/boot", params={"ticket": ticket})
    assert again.status_code == 410 and "already used" in again.text
