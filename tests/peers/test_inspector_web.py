"""The official MCP Inspector (web mode, pinned) renders the live inventory view inline and relays its host requests.

Both sandbox variants: an opaque origin (the view page sends `Origin: null`), and a dedicated origin (the resource
declares `_meta.ui.domain`). An agent on a second MCP client changes the view while the Inspector shows it. A probe
view asks the Inspector every request of `view.host`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from mcp import Client
from playwright.async_api import Browser, FrameLocator, expect

from tests.support.e2e import run_server
from tests.support.embed import APPS_CLIENT, low_stock_sku
from tests.support.inspector_web import InspectorWeb, run_inspector_web
from tests.views.inventory.support import INVENTORY_APP, call, structured

VARIANTS = {"opaque-origin": (), "dedicated-origin": ("--ui-domain", "inventory-view.webapp.test")}
WAIT = 30_000  # ms: the Inspector's page is heavy on a loaded machine


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InspectorWeb]:
    with run_inspector_web(tmp_path_factory.mktemp("inspector-home")) as running:
        yield running


def view_frame(page_frames: FrameLocator) -> FrameLocator:
    """Inspector page → sandbox proxy → shell → the view page."""
    shell = page_frames.frame_locator("iframe").first
    return shell.frame_locator("iframe[title='The live inventory view']")


@pytest.mark.parametrize("variant", VARIANTS)
async def test_the_inspector_shows_the_live_view_inline_and_answers_host_requests(
    variant: str, inspector: InspectorWeb, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = tmp_path_factory.mktemp(variant) / "inventory.db"
    with run_server(*VARIANTS[variant], app=INVENTORY_APP, db=db) as server:
        async with Client(server.mcp_url, extensions=[APPS_CLIENT]) as agent:
            opened = structured(await call(agent, "inventory"))
            context = await browser.new_context(viewport={"width": 1400, "height": 1100})
            try:
                page = await context.new_page()
                await page.goto(inspector.open_app_link(server.mcp_url, "inventory", {"_view": opened["view"]}))
                view = view_frame(page.frame_locator("iframe[src*='/sandbox']"))
                await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=WAIT)
                shells = [frame.url for frame in page.frames]
                assert any(("/app-document/" if VARIANTS[variant] else "about:srcdoc") in url for url in shells), shells

                sku = low_stock_sku(db, "BER")
                row = view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku)
                before = int((await row.locator("td").nth(3).inner_text()).replace(",", ""))
                changed = await call(
                    agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=1, reason="Found one"
                )
                assert not changed.is_error
                await expect(row.locator("td").nth(3)).to_have_text(
                    re.compile(rf"^\s*{before + 1:,}\s*$"), timeout=WAIT
                )

                await row.click()  # selecting asks the host to update the model's context
                await view.get_by_test_id("reorder-ask").click()
                await expect(
                    view.get_by_text("send_message is not supported by this host (MCP Inspector)")
                ).to_be_visible(timeout=WAIT)
                server.wait_for_output(r"update_model_context is not supported by this host \(MCP Inspector\)")

                async with context.expect_page(timeout=WAIT) as opened_link:
                    await view.get_by_test_id("viewer-link").click()
                popup = await opened_link.value
                assert popup.url.startswith(server.base_url + "/viewer")
            finally:
                await context.close()
    assert opened["url"].split("key=")[1] not in server.output  # logs still show no keys


async def test_every_host_request_of_a_view_gets_the_inspectors_answer_or_a_clear_error(
    inspector: InspectorWeb, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = tmp_path_factory.mktemp("probe") / "probe.db"
    with run_server(app="tests.support.host_probe:build", db=db) as server:
        context = await browser.new_context(viewport={"width": 1400, "height": 1100})
        try:
            page = await context.new_page()
            await page.goto(inspector.open_app_link(server.mcp_url, "probe", {}))
            shell = page.frame_locator("iframe[src*='/sandbox']").frame_locator("iframe").first
            probe = shell.frame_locator("iframe[title='The live probe view']")
            await expect(probe.get_by_test_id("host-name")).to_have_text("MCP Inspector", timeout=WAIT)
            await expect(probe.get_by_test_id("tool-result")).to_have_text("opened by probe")
            outcome = probe.get_by_test_id("outcome")
            answers = {
                "call_tool": re.compile(r"^call_tool: ok: .*'text': 'pong'"),
                "send_message": "send_message: NOT_SUPPORTED: "
                "send_message is not supported by this host (MCP Inspector).",
                "update_model_context": "update_model_context: NOT_SUPPORTED: "
                "update_model_context is not supported by this host (MCP Inspector).",
                "request_display_mode": "request_display_mode: ok: fullscreen",
            }
            for name, answer in answers.items():
                await probe.get_by_test_id(name).click()
                await expect(outcome).to_have_text(answer, timeout=WAIT)
        finally:
            await context.close()
