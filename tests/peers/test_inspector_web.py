"""The official MCP Inspector (web mode, pinned) renders the live inventory view inline and relays its host requests.

Both sandbox variants: an opaque origin (the view page sends `Origin: null`), and a dedicated origin (the resource
declares `_meta.ui.domain`). An agent on a second MCP client changes the view while the Inspector shows it. A probe
view asks the Inspector every request of `view.host`. The result widget draws action results under its policy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from mcp import Client
from playwright.async_api import Browser, Frame, FrameLocator, Request, expect

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


async def test_the_inspector_shows_the_result_widget_with_a_chart_a_table_and_an_error_card_without_a_request(
    inspector: InspectorWeb, browser: Browser, tmp_path_factory: pytest.TempPathFactory
) -> None:
    db = tmp_path_factory.mktemp("result") / "inventory.db"
    with run_server(app=INVENTORY_APP, db=db) as server:
        async with Client(server.mcp_url, extensions=[APPS_CLIENT]) as agent:
            opened = structured(await call(agent, "inventory"))
        context = await browser.new_context(viewport={"width": 1400, "height": 1100})
        requests: list[Request] = []
        refused: list[str] = []
        try:
            tab = await context.new_page()  # the view's tab, which the actions run in
            await tab.goto(opened["url"])
            await expect(tab.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=WAIT)
            page = await context.new_page()
            page.on("request", lambda request: requests.append(request))
            page.on(
                "console", lambda message: refused.extend([message.text] if "Content Security" in message.text else [])
            )
            calls = {
                "inventory_stock_report": {"_view": opened["view"], "group_by": "category"},
                "inventory_adjust_stock": {"_view": opened["view"], "sku": "NO-SUCH-SKU", "delta": 1, "reason": "Test"},
            }
            widgets: list[Frame] = []
            for tool, arguments in calls.items():
                await page.goto(inspector.open_app_link(server.mcp_url, tool, arguments))
                widget = (
                    page.frame_locator("iframe[src*='/sandbox']")
                    .frame_locator("iframe")
                    .first.locator("#webapp-result")
                )
                if tool == "inventory_stock_report":
                    await expect(widget).to_have_attribute("data-state", "rendered", timeout=WAIT)
                    await expect(widget.locator(".wv-chart-slot canvas").first).to_be_visible()
                    await expect(widget.locator("table tbody tr").first).to_be_visible()
                    await expect(widget.locator("span.wv-tool-chip").first).to_be_visible()  # no messages: chips show
                    assert await widget.locator("button.wv-tool-chip").count() == 0
                else:
                    await expect(widget).to_have_attribute("data-state", "error", timeout=WAIT)
                    await expect(widget.locator(".wv-error-card")).to_contain_text("NOT_FOUND")
                widgets += [frame for frame in page.frames if "/sandbox" in getattr(frame.parent_frame, "url", "")]
        finally:
            await context.close()
    assert len(widgets) == 2
    assert [request.url for request in requests if request.frame in widgets] == []  # nothing leaves the widget
    assert refused == []  # and nothing it does meets the Inspector's policy
