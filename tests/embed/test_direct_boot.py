"""The live view inline where the host blocks nested frames (Claude): the shell boots the view page itself by a
one-time ticket, in a harness host with Claude's policy (host, sandbox and server on three origins); a booted page
never takes over a person's tab; where the host honours frame domains, a cross-site sandbox's nested frame is framed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, BrowserContext, Frame, FrameLocator, Locator, Page, Request, expect

from tests.support.claude_host import ClaudeHost, serve_claude_host
from tests.support.e2e import RunningServer, run_server
from tests.support.embed import APPS_CLIENT, Hosted, low_stock_sku, serve_hosted
from tests.support.haproxy import free_port, run_haproxy
from tests.support.tls import make_certificate
from tests.views.inventory.support import INVENTORY_APP, call, structured
from webapp.bridge import ELSEWHERE_NOTICE, TAKEN_OVER_NOTICE

TITLE = "The live inventory view"
TIMINGS = ("--reconnect-grace", "2", "--wait-for-live", "5", "--call-timeout", "3")


Served = Hosted[ClaudeHost]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_hosted(tmp_path_factory, TIMINGS, serve_claude_host) as served:
        yield served


@dataclass
class Harness:
    page: Page
    documents: list[str]  # every document request of any frame


async def open_harness(context: BrowserContext, url: str) -> Harness:
    """The harness host page in `context`, recording every document any of its frames requests."""
    page = await context.new_page()
    documents: list[str] = []

    def seen(request: Request) -> None:
        if request.resource_type == "document":
            documents.append(request.url)

    page.on("request", seen)
    await page.goto(url)
    return Harness(page, documents)


@pytest_asyncio.fixture(loop_scope="session")
async def host(browser: Browser, served: Served) -> AsyncIterator[Harness]:
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        yield await open_harness(context, served.host.url)
    finally:
        await context.close()


async def show(
    harness: Harness,
    served: Served,
    agent: Client,
    *,
    opaque: bool = False,
    keep_http: bool = True,
    frames: bool = False,
) -> dict[str, Any]:
    """Call the opening tool as Claude's model would and render its resource under Claude's policy (with `frames`,
    the policy allows the resource's frame domains, as hosts other than Claude do)."""
    tool = next(tool for tool in (await agent.list_tools()).tools if tool.name == "inventory")
    assert tool.meta is not None
    resource = (await agent.read_resource(tool.meta["ui"]["resourceUri"])).contents[0]
    result = await call(agent, "inventory", warehouse_code="BER")  # (a view an earlier test left may be reused)
    shown = {
        "html": getattr(resource, "text", ""),
        "csp": (resource.meta or {})["ui"]["csp"],
        "input": {},
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        "sandboxOrigin": served.host.sandbox_origin,
        "keepHttp": keep_http,  # Claude drops http:// domains (this server is plain http; https behind HAProxy)
        "opaque": opaque,
        "theme": "dark",
        "honourFrames": frames,
    }
    await harness.page.evaluate("shown => window.harness.show(shown)", shown)
    return {**structured(result), "meta": result.meta}


def view_in(harness: Harness, index: int) -> FrameLocator:
    sandbox = harness.page.frame_locator(f"iframe[data-index='{index}']")
    return sandbox.frame_locator("iframe").frame_locator(f"iframe[title='{TITLE}']")


def on_hand(view: FrameLocator, sku: str) -> Locator:
    return view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku).locator("td").nth(3)


async def view_frame(harness: Harness) -> Frame:
    """The frame that shows the view (framed or booted) in the harness."""
    for frame in harness.page.frames:
        if frame.is_detached() or frame.parent_frame is None:
            continue
        element = await frame.frame_element()
        if await element.get_attribute("title") == TITLE:
            return frame
    raise AssertionError("no view in the harness")


async def test_the_shell_boots_the_view_where_the_host_blocks_its_frame(host: Harness, served: Served) -> None:
    sku = low_stock_sku(served.db, "BER")
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, served, agent)
        view = view_in(host, 0)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
        await expect(view.locator("body")).to_have_class(re.compile(r"\bbody--dark\b"))  # the host's theme
        before = int(await on_hand(view, sku).inner_text())
        await call(agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=5, reason="Delivery")
        await expect(on_hand(view, sku)).to_have_text(str(before + 5), timeout=2000)  # the agent's action, live

        await view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku).click()  # a person's click
        await host.page.wait_for_function(
            "sku => window.harness.received.contexts.some(c => c.content[0].text.includes(sku))", arg=sku
        )
        await view.get_by_test_id("reorder-ask").click()  # view.host.send_message reaches the host
        await host.page.wait_for_function("window.harness.received.messages.length === 1")
        (message,) = await host.page.evaluate("window.harness.received.messages")
        assert message["content"][0]["text"].startswith(f"Please reorder {sku} (")
        sizes: list[int] = await host.page.evaluate("window.harness.received.sizes")
        assert sizes and min(sizes) > 0 and len(sizes) < 40, sizes
        await view.get_by_role("button", name="Call log").click()  # view.host.open_link
        await host.page.wait_for_function("window.harness.received.links.length === 1")
        (link,) = await host.page.evaluate("window.harness.received.links")
        assert link.startswith(served.server.base_url + "/viewer"), link

        first = await view_frame(host)
        await first.evaluate("location.reload()")  # booted again, in a new frame, with the fresh ticket
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
        assert first.is_detached() and not (await view_frame(host)).is_detached()
        await call(agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=-2, reason="Count")
        await expect(on_hand(view, sku)).to_have_text(str(before + 3), timeout=2000)
    server = served.server.base_url
    assert [url for url in host.documents if url.startswith(server)] == []  # no frame ever loads the server's page
    ticket = opened["meta"]["webapp/view"]["ticket"]
    async with httpx.AsyncClient() as client:
        again = await client.get(f"{server}/_webapp/boot", params={"ticket": ticket})
    assert again.status_code == 410 and "already used" in again.text
    assert f'href="{opened["url"]}"' in again.text  # and offers the card's link
    assert ticket not in served.server.output and ticket[:12] not in served.server.output  # never logged


async def test_an_opaque_origin_sandbox_boots_the_view_too(host: Harness, served: Served) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, served, agent, opaque=True)
        view = view_in(host, 0)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="HAM")
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("HAM", timeout=2000)
    assert [url for url in host.documents if url.startswith(served.server.base_url)] == []


async def test_a_nested_frame_in_a_cross_site_sandbox_is_framed_by_its_key_and_never_booted(
    host: Harness, served: Served
) -> None:
    # Chromium sends the cross-site sandbox's origin with the nested frame's navigation; the page's key with
    # `Sec-Fetch-Dest: iframe` admits it (apps.md §13), so the frame shows the view and no ticket is spent.
    boots: list[str] = []
    host.page.on("request", lambda request: boots.append(request.url) if "/_webapp/boot" in request.url else None)
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, served, agent, frames=True)
        view = view_in(host, 0)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="HAM")
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("HAM", timeout=2000)
    framed = opened["url"] + "&embed=1"
    assert (await view_frame(host)).url == framed  # the server's own page, not a srcdoc the shell wrote
    assert framed in host.documents and boots == []


async def test_a_booted_frame_never_takes_over_a_tab_a_person_opened_and_shows_the_card_instead(
    host: Harness, served: Served
) -> None:
    # Newest wins between frames of hosts (apps.md §7); a page booted by ticket leaves a person's live tab alone.
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        first = structured(await call(agent, "inventory", warehouse_code="BER"))
        person = await host.page.context.new_page()  # the person opens the link the assistant gave in a browser tab
        await person.goto(first["url"])
        await expect(person.get_by_test_id("warehouse-code")).to_have_text("BER")
        opened = await show(host, served, agent)  # the same view, and the host's shell boots it by ticket
        assert opened["view"] == first["view"]
        card = view_in(host, 0).get_by_test_id("webapp-open-card")
        await expect(card).to_contain_text(ELSEWHERE_NOTICE)
        await call(agent, "inventory_update", _view=opened["view"], warehouse_code="HAM")
        await expect(person.get_by_test_id("warehouse-code")).to_have_text("HAM", timeout=2000)  # still live
        await expect(person.get_by_text(TAKEN_OVER_NOTICE)).to_have_count(0)
        await card.get_by_role("button", name="Open in your browser").click()
        await host.page.wait_for_function("window.harness.received.links.length === 1")
    assert await host.page.evaluate("window.harness.received.links") == [opened["url"]]
    assert (await view_frame(host)).url == "about:srcdoc"  # the booted page, not a nested frame of the server


async def test_a_plain_http_origin_that_claude_drops_shows_the_card_with_the_https_advice(
    host: Harness, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, served, agent, keep_http=False)
    shell = host.page.frame_locator("iframe[data-index='0']").frame_locator("iframe")
    card = shell.get_by_test_id("webapp-open-card")
    await expect(card).to_contain_text("This host does not show live views inline.")
    await expect(card).to_contain_text("https --base-url")
    await shell.get_by_role("button", name="Open the live view").click()
    await host.page.wait_for_function("window.harness.received.links.length === 1")
    assert await host.page.evaluate("window.harness.received.links") == [opened["url"]]


@pytest.fixture(scope="module")
def behind_tls(tmp_path_factory: pytest.TempPathFactory, served: Served) -> Iterator[RunningServer]:
    """A server behind HAProxy terminating TLS with a certificate made now: its public origin is https."""
    folder = tmp_path_factory.mktemp("tls")
    certificate = make_certificate(folder)
    public = free_port()
    base = ("--base-url", f"https://127.0.0.1:{public}")
    with run_server(*TIMINGS, *base, app=INVENTORY_APP, db=folder / "inventory.db", wait=False) as worker:
        worker.base_url = worker.wait_for_output(r"Uvicorn running on (http://\S+)", 30).group(1)  # MCP: direct
        with run_haproxy(public, worker.port, worker.port, tls=certificate.pem):
            yield worker


async def test_behind_haproxy_with_tls_the_view_boots_from_the_https_origin_claude_keeps(
    browser: Browser, served: Served, behind_tls: RunningServer
) -> None:
    context = await browser.new_context(ignore_https_errors=True)  # trusts the test's certificate for this run
    try:
        harness = await open_harness(context, served.host.url)
        async with Client(behind_tls.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
            opened = await show(harness, served, agent, keep_http=False)  # Claude's rules: https only
            assert opened["url"].startswith("https://")
            view = view_in(harness, 0)
            await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
            await call(agent, "inventory_update", _view=opened["view"], warehouse_code="MUC")
            await expect(view.get_by_test_id("warehouse-code")).to_have_text("MUC", timeout=2000)
        public = opened["url"].split("/inventory")[0]
        assert [url for url in harness.documents if url.startswith(public)] == []
    finally:
        await context.close()
