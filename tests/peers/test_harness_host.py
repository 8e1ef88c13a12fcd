"""A host built on the ext-apps SDK's AppBridge that takes messages and model context (as Claude and ChatGPT do):
what the inline inventory sends arrives there; a sandbox that ignores frame domains gets the "Open the live view"
card; a newer frame takes the view over, and a torn-down frame counts as a closed tab.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, Frame, FrameLocator, Locator, Page, Request, expect

from tests.support.embed import APPS_CLIENT, Hosted, low_stock_sku, serve_hosted
from tests.support.harness_host import serve_harness
from tests.views.inventory.support import call, structured, texts
from webapp import response, ui

TITLE = "The live inventory view"
WIDGET = "ui://webapp/result"
TIMINGS = ("--reconnect-grace", "1", "--wait-for-live", "5", "--call-timeout", "3")  # host requests end within 3 s


Served = Hosted[str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve_hosted(tmp_path_factory, TIMINGS, serve_harness) as served:
        yield served


@pytest_asyncio.fixture(loop_scope="session")
async def host(browser: Browser, served: Served) -> AsyncIterator[Page]:
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        page = await context.new_page()
        await page.goto(served.host)
        yield page
    finally:
        await context.close()


async def show(
    host: Page, agent: Client, *, frames_honoured: bool = True, hang: bool = False, link: bool = True
) -> dict[str, Any]:
    """Call the opening tool as the host's model would and render its resource; returns the structured result.
    (Each test's agent has a session of its own, so its opening calls reuse its own view.)"""
    tool = next(tool for tool in (await agent.list_tools()).tools if tool.name == "inventory")
    assert tool.meta is not None
    resource = (await agent.read_resource(tool.meta["ui"]["resourceUri"])).contents[0]
    result = await call(agent, "inventory")
    sent = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not link:  # as a host that drops the result's structured content and _meta
        sent = {"content": sent["content"]}
    shown = {
        "html": getattr(resource, "text", ""),
        "csp": (resource.meta or {})["ui"]["csp"],
        "input": {},
        "result": sent,
        "framesHonoured": frames_honoured,
        "theme": "dark",
        "hang": hang,
    }
    await host.evaluate("shown => window.harness.show(shown)", shown)
    return structured(result)


def view_in(host: Page, index: int) -> FrameLocator:
    return host.frame_locator(f"iframe[data-index='{index}']").frame_locator(f"iframe[title='{TITLE}']")


async def test_the_reorder_message_and_the_selected_item_reach_a_host_that_takes_them(
    host: Page, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, agent)
        view = view_in(host, 0)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER")
        await expect(view.locator("body")).to_have_class(re.compile(r"\bbody--dark\b"))  # the host's theme
        sku = low_stock_sku(served.db, "BER")
        await view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku).click()
        await host.wait_for_function(
            "sku => window.harness.received.contexts.some(c => c.content[0].text.includes(sku))", arg=sku
        )
        await view.get_by_test_id("reorder-ask").click()
        await expect(view.get_by_text(f"Asked the assistant to reorder {sku}.")).to_be_visible()
        messages = await host.evaluate("window.harness.received.messages")
        assert [m["role"] for m in messages] == ["user"]
        assert messages[0]["content"][0]["text"].startswith(f"Please reorder {sku} (")
        sizes: list[int] = await host.evaluate("window.harness.received.sizes")
        assert sizes and min(sizes) > 0 and len(sizes) < 40, sizes  # measured, never 0, no resize loop

    tab = await host.context.new_page()  # the same view in a plain tab knows it has no host: nothing to ask
    await tab.goto(opened["url"])
    await expect(tab.get_by_test_id("item-panel")).to_contain_text(sku)  # the selection was saved with the view
    await expect(tab.get_by_test_id("reorder-ask")).to_be_hidden()


async def test_a_sandbox_that_ignores_frame_domains_shows_the_open_the_live_view_card(
    host: Page, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, agent, frames_honoured=False)
    shell = host.frame_locator("iframe[data-index='0']")
    await expect(shell.get_by_test_id("webapp-open-card")).to_contain_text("This host does not show live views inline.")
    await shell.get_by_role("button", name="Open the live view").click()
    await host.wait_for_function("window.harness.received.links.length === 1")
    assert await host.evaluate("window.harness.received.links") == [opened["url"]]


async def test_a_newer_frame_takes_the_view_over_and_a_torn_down_frame_counts_as_a_closed_tab(
    host: Page, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        first = await show(host, agent)
        await expect(view_in(host, 0).get_by_test_id("warehouse-code")).to_have_text("BER")
        second = await show(host, agent)
        assert second["view"] == first["view"] and second["reused"]
        await expect(view_in(host, 0).get_by_text("This view is now shown in another tab.")).to_be_visible()
        await expect(view_in(host, 1).get_by_test_id("warehouse-code")).to_have_text("BER")
        await host.evaluate("window.harness.tearDown(1)")
        closed = await call(agent, "inventory_refresh_stock", _view=first["view"])
        assert closed.is_error and 'code="VIEW_CLOSED"' in texts(closed)[0], texts(closed)
    assert first["url"].split("key=")[1] not in served.server.output  # the logs show no keys


async def test_a_host_request_that_gets_no_answer_ends_with_a_clear_error(host: Page, served: Served) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        await show(host, agent, hang=True)
        view = view_in(host, 0)
        sku = low_stock_sku(served.db, "BER")
        await view.get_by_test_id("stock-table").locator("tbody tr", has_text=sku).click()
        await view.get_by_test_id("reorder-ask").click()
        await expect(view.get_by_text("send_message: Harness host did not answer within 3 s.")).to_be_visible()


async def test_a_result_without_the_view_link_shows_the_card_instead_of_a_blank_frame(
    host: Page, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        await show(host, agent, link=False)
    shell = host.frame_locator("iframe[data-index='0']")
    await expect(shell.get_by_test_id("webapp-open-card")).to_contain_text("the tool result has no view link")
    await shell.get_by_role("button", name="Open the live view").click()
    await host.wait_for_function("window.harness.received.links.length === 1")
    assert await host.evaluate("window.harness.received.links") == [served.server.base_url + "/inventory"]


async def show_result(
    host: Page, agent: Client, tool: str, *, hold: bool = False, **arguments: Any
) -> tuple[Locator, dict[str, Any]]:
    """Call `tool` as the host's model would and render the result widget it links in a new frame; returns the
    widget and the result (with `hold`, the frame gets the tool input only, until `window.harness.sendResult`)."""
    listed = next(listed for listed in (await agent.list_tools()).tools if listed.name == tool)
    assert listed.meta == {"ui": {"resourceUri": WIDGET}}
    resource = (await agent.read_resource(WIDGET)).contents[0]
    result = (await call(agent, tool, **arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
    index = await host.locator("iframe[data-index]").count()
    shown = {
        "html": getattr(resource, "text", ""),
        "csp": (resource.meta or {})["ui"]["csp"],
        "input": arguments,
        "result": None if hold else result,
        "framesHonoured": True,  # frame-src with no source: the host's strictest policy
        "theme": "light",
        "variables": {"--color-text-primary": "rgb(20, 30, 60)"},
        "tool": tool,
    }
    await host.evaluate("shown => window.harness.show(shown)", shown)
    return host.frame_locator(f"iframe[data-index='{index}']").locator("#webapp-result"), result


async def frames_from(host: Page, first: int) -> list[Frame]:
    """The harness's frames from index `first` on (not the frames inside them)."""
    found: list[Frame] = []
    for frame in host.main_frame.child_frames:
        index = await (await frame.frame_element()).get_attribute("data-index")
        if index is not None and int(index) >= first:
            found.append(frame)
    return found


async def test_the_result_widget_draws_inventory_results_under_the_hosts_policy_without_a_request(
    host: Page, served: Served
) -> None:
    requests: list[Request] = []
    host.on("request", lambda request: requests.append(request))
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        opened = await show(host, agent)  # the view's tab, which the actions run in
        await expect(view_in(host, 0).get_by_test_id("warehouse-code")).to_have_text("BER")
        report, result = await show_result(host, agent, "inventory_stock_report", hold=True, group_by="category")
        await expect(report).to_have_text("Working… (inventory_stock_report)")
        await host.evaluate("result => window.harness.sendResult(1, result)", result)  # frame 0 is the view
        await expect(report).to_have_attribute("data-state", "rendered")
        await expect(report.locator(".wv-chart-slot canvas").first).to_be_visible()
        await expect(report.locator("table tbody tr").first).to_be_visible()
        await expect(report).to_have_css("color", "rgb(20, 30, 60)")  # the host's style variables
        await host.evaluate("window.harness.setContext(1, {theme: 'dark'})")
        await expect(report).to_have_attribute("data-theme", "dark")

        failed, _ = await show_result(
            host, agent, "inventory_adjust_stock", _view=opened["view"], sku="NO-SUCH-SKU", delta=1, reason="Test"
        )
        await expect(failed).to_have_attribute("data-state", "error")
        await expect(failed.locator(".wv-error-card")).to_contain_text("NOT_FOUND")
    widgets = await frames_from(host, 1)
    assert len(widgets) == 2
    assert [r.url for r in requests if r.frame in widgets] == []  # the widget asks nothing of any server
    violations = await host.evaluate("window.harness.received.violations")
    assert [v for v in violations if v["index"] > 0] == []  # and nothing it does meets the host's policy
    sizes: list[int] = await host.evaluate("window.harness.received.sizes")
    assert sizes and min(sizes) > 0, sizes


async def test_a_suggestion_chip_of_the_result_widget_asks_the_agent_where_the_host_takes_messages(
    host: Page, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        await show(host, agent)  # the view's tab, which the actions run in
        await expect(view_in(host, 0).get_by_test_id("warehouse-code")).to_have_text("BER")
        sku = low_stock_sku(served.db, "BER")
        item, _ = await show_result(host, agent, "inventory_adjust_stock", sku=sku, delta=1, reason="Found one")
        chip = item.locator("button.wv-tool-chip").first
        tool = await chip.inner_text()
        await chip.click()
        await expect(item.get_by_test_id("widget-notice")).to_have_text(f"Asked the assistant to call {tool}.")
    (message,) = await host.evaluate("window.harness.received.messages")
    assert message["role"] == "user" and message["content"][0]["text"].startswith(f"Please call {tool} (")


HOSTILE = "parent.harness.received.pwned = 1"


def hostile_result() -> dict[str, Any]:
    """A result whose every block tries to run script in the widget, or to leave it."""
    chart = {
        "title": {"text": "<b>t</b>", "link": f"javascript:{HOSTILE}"},
        "tooltip": {"formatter": f"<img src=x onerror='{HOSTILE}'>", "extraCssText": "background: url(https://x.test)"},
        ":formatter": f"() => {{ {HOSTILE} }}",
        "xAxis": {"type": "category", "data": [f"<img src=x onerror='{HOSTILE}'>"], "axisLabel": {":formatter": "1"}},
        "yAxis": {"type": "value"},
        "series": [{"type": "bar", "name": f"<script>{HOSTILE}</script>", "data": [3]}],
    }
    markdown = (
        f"<script>{HOSTILE}</script>\n\n<img src=x onerror='{HOSTILE}'>\n\n"
        f"[a link](javascript:{HOSTILE}) and [another](https://example.test/ok)\n"
    )
    built = (
        response({"note": f"<img src=x onerror='{HOSTILE}'><script>{HOSTILE}</script>"})
        .ui_block(ui.echarts(chart, title="Chart"))
        .ui_block(ui.markdown(markdown, title="Notes"))
        .ui_block(ui.mermaid(f"graph TD\n  A[\"<img src=x onerror='{HOSTILE}'>\"] --> B", title="Flow"))
        .build()
    )
    return built.model_dump(mode="json", by_alias=True, exclude_none=True)


async def test_a_hostile_result_runs_nothing_in_the_result_widget_and_links_leave_only_through_the_host(
    host: Page, served: Served
) -> None:
    async with Client(served.server.mcp_url, mode="legacy", extensions=[APPS_CLIENT]) as agent:
        html = getattr((await agent.read_resource(WIDGET)).contents[0], "text", "")
    shown = {"html": html, "csp": {}, "input": {}, "result": hostile_result(), "framesHonoured": True, "theme": "light"}
    await host.evaluate("shown => window.harness.show(shown)", shown)
    widget = host.frame_locator("iframe[data-index='0']").locator("#webapp-result")
    await expect(widget).to_have_attribute("data-state", "rendered")
    canvas = widget.locator(".wv-chart-slot canvas").first
    box = await canvas.bounding_box()
    assert box is not None
    await host.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.6)  # over the bar: its tooltip
    await widget.get_by_text("a link").click()
    await widget.get_by_text("another").click()
    await widget.get_by_text("See the diagram in the call viewer").click()  # Mermaid is drawn by the viewer only
    await host.wait_for_function("window.harness.received.links.length === 2")
    received = await host.evaluate("window.harness.received")
    assert received["links"] == ["https://example.test/ok", f"{served.server.base_url}/viewer"]  # through the host
    assert "pwned" not in received
    assert await widget.locator("script, img, iframe, [onerror]").count() == 0
