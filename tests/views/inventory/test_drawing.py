"""What a change costs the tabs that draw it: the prebuilt stylesheet instead of Tailwind's in-browser compiler, one
socket message to the acting tab and one answer, one style recalculation of the changed elements in a watching tab
(Chromium's counters and timeline over CDP); what a watching tab spends per change in time is a figure of
`bench.inventory`."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from mcp import Client
from playwright.async_api import Browser, CDPSession, Page, WebSocket, expect

from tests.support.e2e import RunningServer
from tests.views.inventory.support import OpenView, call, data_of, held_client, on_hand_cell, open_view

pytestmark = pytest.mark.asyncio(loop_scope="session")

SKU = "PLB-7002"


async def test_pages_use_the_prebuilt_stylesheet_without_tailwinds_compiler(view: OpenView, tab: Page) -> None:
    sheets = await tab.evaluate("[...document.styleSheets].map((sheet) => sheet.href || '')")
    assert any("/_webapp/pages-" in href for href in sheets), sheets
    assert await tab.locator("script[src*=tailwindcss]").count() == 0
    count = tab.get_by_test_id("row-count")  # `text-xs text-gray-500`: Tailwind classes from the prebuilt sheet
    assert await count.evaluate("(element) => getComputedStyle(element).fontSize") == "12px"


async def test_the_stylesheet_is_cached_for_good_and_follows_the_url_prefix(view: OpenView, tab: Page) -> None:
    href = await tab.evaluate("document.querySelector('link[data-webapp-styles]').href")
    response = await tab.request.get(href)
    assert response.ok and response.headers["content-type"].startswith("text/css")
    assert "immutable" in response.headers["cache-control"]
    page = await tab.request.get(view.url, headers={"X-Forwarded-Prefix": "/views"})
    html = await page.text()
    assert '"/views/_nicegui/' in html  # the import map the link's script reads its prefix from
    assert "_webapp/pages-" in html


@pytest.mark.parametrize("change", ["adjust one row", "filter the table"])
async def test_a_change_reaches_the_acting_tab_in_one_message_and_gets_one_answer(
    server: RunningServer, browser: Browser, change: str
) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = await context.new_page()
        frames = _watched(page)
        async with held_client(server.mcp_url) as agent:
            opened = await open_view(agent, page, warehouse_code="BER")
            await _sent(frames, '\\"sortBy\\"')  # the table's report of its sort as it mounted: before the change
            before = int((await on_hand_cell(page, SKU).inner_text()).replace(",", ""))
            mark = len(frames)
            if change == "adjust one row":
                result = await call(agent, "inventory_adjust_stock", _view=opened.handle, sku=SKU, delta=1, reason="C")
                assert not result.is_error, result
                await expect(on_hand_cell(page, SKU)).to_have_text(f"{before + 1:,}")
            else:
                result = await call(agent, "inventory_update", _view=opened.handle, search="hex")
                assert not result.is_error, result
                await expect(page.get_by_test_id("filter-search")).to_have_value("hex")
        events = [(way, frame) for way, frame in frames[mark:] if frame.startswith("42")]  # socket.io events
        received = [frame for way, frame in events if way == "in"]
        answers = [frame for way, frame in events if way == "out" and not frame.startswith('42["ack"')]
        assert len(received) == 1 and received[0].startswith('42["update"'), received
        assert len(answers) == 1 and answers[0].startswith('42["event"'), answers
    finally:
        await context.close()


async def test_the_tabs_own_sort_is_kept_without_sending_the_table_back(
    server: RunningServer, browser: Browser
) -> None:
    """Quasar reports the table's sort when it mounts and on every sort; the server keeps it, and sends no rows."""
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = await context.new_page()
        frames = _watched(page)
        async with held_client(server.mcp_url) as agent:
            opened = await open_view(agent, page, warehouse_code="BER")
            table = page.get_by_test_id("stock-table")
            await table.locator("th", has_text="On hand").click()
            await expect(table.locator("th.sorted", has_text="On hand")).to_be_visible()
            await _sent(frames, '\\"sortBy\\":\\"on_hand\\"')
            lowest = (await table.locator("tbody.q-virtual-scroll__content tr td").first.inner_text()).strip()
            before = int((await on_hand_cell(page, lowest).inner_text()).replace(",", ""))
            result = await call(agent, "inventory_adjust_stock", _view=opened.handle, sku=lowest, delta=1, reason="C")
            assert not result.is_error, result
            await expect(on_hand_cell(page, lowest)).to_have_text(f"{before + 1:,}")
        updates = [frame for way, frame in frames if way == "in" and frame.startswith('42["update"')]
        tables = [frame for frame in updates if '"nicegui-stock_table"' in frame]
        assert len(tables) == 1, [frame[:80] for frame in tables]  # the page's own build, nothing after it
    finally:
        await context.close()


def _watched(page: Page) -> list[tuple[str, str]]:
    """The socket messages of `page` from now on, as they come: `("in" | "out", text)`."""
    frames: list[tuple[str, str]] = []

    def watch(socket: WebSocket) -> None:
        socket.on("framereceived", lambda payload: frames.append(("in", str(payload))))
        socket.on("framesent", lambda payload: frames.append(("out", str(payload))))

    page.on("websocket", watch)
    return frames


async def _sent(frames: list[tuple[str, str]], text: str) -> None:
    """Return once the tab has sent a socket message containing `text` (bounded)."""
    async with asyncio.timeout(10):
        while not any(way == "out" and text in frame for way, frame in frames):
            await asyncio.sleep(0.05)


# Resolves once the page has drawn the frame after `sku`'s on-hand cell shows `expected` (bounded by the caller).
_DRAWN = """([sku, expected]) => new Promise((resolve) => {
  const shown = () => [...document.querySelectorAll('[data-testid=stock-table] tbody tr')].some((row) => {
    const cells = row.querySelectorAll('td');
    return cells[0]?.textContent.trim() === sku && cells[3].textContent.trim() === expected;
  });
  const drawn = () => requestAnimationFrame(() => setTimeout(resolve));
  if (shown()) return drawn();
  const observer = new MutationObserver(() => shown() && (observer.disconnect(), drawn()));
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
})"""
# Resolves after `frames` animation frames in which nothing was asked of the page (a quiet start for a count).
_QUIET = """(frames) => new Promise((resolve) => {
  const next = (left) => (left ? requestAnimationFrame(() => next(left - 1)) : setTimeout(resolve));
  next(frames);
})"""


async def _style_recalculations(cdp: CDPSession) -> float:
    metrics = (await cdp.send("Performance.getMetrics"))["metrics"]
    return next(float(metric["value"]) for metric in metrics if metric["name"] == "RecalcStyleCount")


@asynccontextmanager
async def _restyles(page: Page) -> AsyncGenerator[list[int]]:
    """The element counts of the style recalculations in the page's frame while the block ran (its timeline trace),
    in the list yielded, filled when the block ends."""
    cdp = await page.context.new_cdp_session(page)  # a session per trace: its events end with it
    counts: list[int] = []
    try:
        frame = (await cdp.send("Page.getFrameTree"))["frameTree"]["frame"]["id"]
        events: list[dict[str, Any]] = []
        complete: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def collect(data: dict[str, Any]) -> None:
            events.extend(data["value"])

        def end(_: object) -> None:
            complete.set_result(None)

        cdp.on("Tracing.dataCollected", collect)
        cdp.on("Tracing.tracingComplete", end)
        config = {"includedCategories": ["devtools.timeline"]}
        await cdp.send("Tracing.start", {"traceConfig": config, "transferMode": "ReportEvents"})
        yield counts
        await cdp.send("Tracing.end")
        async with asyncio.timeout(10):
            await complete
    finally:
        await cdp.detach()
    restyles = [event["args"] for event in events if event["name"] == "UpdateLayoutTree"]
    counts += [args["elementCount"] for args in restyles if args.get("beginData", {}).get("frame") == frame]


async def test_a_watching_tab_applies_a_change_with_one_style_recalculation_of_the_changed_elements(
    agent: Client, view: OpenView, server: RunningServer, browser: Browser
) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        watching = await context.new_page()  # a view of its own on the same warehouse, that no call acts on
        await watching.goto(server.base_url + "/inventory")
        await expect(watching.get_by_test_id("row-count")).not_to_have_text("0 items shown")
        feed = await watching.get_by_test_id("movement-feed").evaluate("(feed) => feed.querySelectorAll('*').length")
        cdp = await context.new_cdp_session(watching)
        await cdp.send("Performance.enable")
        for delta in (1, -1):
            before = int((await on_hand_cell(watching, SKU).inner_text()).replace(",", ""))
            async with _restyles(watching) as restyled:
                await watching.evaluate(_QUIET, 12)  # the chart's animation loop has gone to sleep
                counted = await _style_recalculations(cdp)
                drawn = asyncio.ensure_future(watching.evaluate(_DRAWN, [SKU, f"{before + delta:,}"]))
                arguments = {"_view": view.handle, "sku": SKU, "delta": delta, "reason": "Count"}
                result = await agent.call_tool("inventory_adjust_stock", arguments)
                assert not result.is_error, result
                async with asyncio.timeout(10):
                    await drawn
                assert await _style_recalculations(cdp) - counted == 1
            # the feed's new row and the few changed figures, not the feed's other rows (NiceGUI's `#esm-fallback ~ *`
            # rule made the browser restyle all of them on every insert)
            assert 0 < sum(restyled) < feed / 2, (restyled, feed)
    finally:
        await context.close()


# Records every chart draw in the tab: when, and the units per category it drew.
_DRAWS = """() => {
  const chart = getElement(document.querySelector('[data-testid=stock-chart]').id.slice(1)).chart;
  const setOption = chart.setOption.bind(chart);
  window.chartDraws = [];
  chart.setOption = (...args) => {
    window.chartDraws.push(performance.now());
    return setOption(...args);
  };
}"""
_CHART_UNITS = """() => {
  const chart = getElement(document.querySelector('[data-testid=stock-chart]').id.slice(1)).chart;
  return chart.getOption().series[0].data.reduce((sum, units) => sum + units, 0);
}"""


async def test_a_burst_of_changes_draws_the_chart_at_most_once_a_second_and_ends_with_the_newest_figures(
    agent: Client, view: OpenView, server: RunningServer, browser: Browser
) -> None:
    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        watching = await context.new_page()
        await watching.goto(server.base_url + "/inventory")
        await expect(watching.get_by_test_id("row-count")).not_to_have_text("0 items shown")
        await watching.evaluate(_DRAWS)
        for delta in (3, -1, 2, -1, 4, 1):
            arguments = {"_view": view.handle, "sku": SKU, "delta": delta, "reason": "Count"}
            assert not (await agent.call_tool("inventory_adjust_stock", arguments)).is_error
        units = watching.get_by_test_id("kpi-units").locator(".text-2xl")
        async with asyncio.timeout(10):  # the last figures are drawn once the second after the first draw is over
            while await watching.evaluate(_CHART_UNITS) != int((await units.inner_text()).replace(",", "")):
                await asyncio.sleep(0.1)
        draws = await watching.evaluate("window.chartDraws")
        assert 1 <= len(draws) < 6, draws
        # paced, not drawn per change (those come ~10 ms apart): a second apart, give or take a late animation frame
        assert all(later - earlier > 500 for earlier, later in itertools.pairwise(draws)), draws
    finally:
        await context.close()


async def test_a_refresh_that_finds_nothing_new_draws_no_chart_and_a_change_after_it_does(
    agent: Client, view: OpenView, tab: Page
) -> None:
    close = tab.get_by_test_id("item-close")
    if await close.is_visible():  # an item an earlier test selected: the chart is its history, not the categories
        await close.click()
        await expect(close).to_be_hidden()
    await tab.evaluate(_QUIET, 2)
    await tab.evaluate(_DRAWS)
    for _ in range(3):
        assert not (await call(agent, "inventory_refresh_stock", _view=view.handle)).is_error
    await tab.evaluate(_QUIET, 2)  # a draw is made at the animation frame after the confirmation
    assert await tab.evaluate("window.chartDraws") == []
    arguments = {"_view": view.handle, "sku": SKU, "delta": 2, "reason": "Count"}
    assert not (await agent.call_tool("inventory_adjust_stock", arguments)).is_error
    units = tab.get_by_test_id("kpi-units").locator(".text-2xl")
    async with asyncio.timeout(5):  # drawn at once, or once the second since the last draw is over
        while await tab.evaluate(_CHART_UNITS) != int((await units.inner_text()).replace(",", "")):
            await asyncio.sleep(0.1)
    assert len(await tab.evaluate("window.chartDraws")) == 1


# Counts the renders of the component of the element that `selector` finds, from now on (`window.renders[selector]`).
_COUNT_RENDERS = """(selector) => {
  const component = getElement(document.querySelector(selector).id.slice(1)).$;
  const render = component.render;
  window.renders = { ...window.renders, [selector]: 0 };
  component.render = function (...args) {
    window.renders[selector] += 1;
    return render.apply(this, args);
  };
}"""
_TABLE = "[data-testid=stock-table]"


async def test_an_agents_search_that_keeps_the_rows_renders_the_search_box_again_not_the_table(
    agent: Client, view: OpenView, tab: Page
) -> None:
    count = tab.get_by_test_id("row-count")
    try:
        await call(agent, "inventory_update", _view=view.handle, search="FST-10")
        await expect(count).to_have_text("8 items shown")
        await tab.evaluate(_COUNT_RENDERS, _TABLE)
        await call(agent, "inventory_update", _view=view.handle, search="FST-100")  # the same eight rows
        await expect(tab.get_by_test_id("filter-search")).to_have_value("FST-100")
        await tab.evaluate(_QUIET, 2)
        assert await tab.evaluate("(selector) => window.renders[selector]", _TABLE) == 0
        await call(agent, "inventory_update", _view=view.handle, search="FST-1001")  # other rows: the table renders
        await expect(count).to_have_text("1 item shown")
        assert await tab.evaluate("(selector) => window.renders[selector]", _TABLE) > 0
    finally:
        await call(agent, "inventory_update", _view=view.handle, search=None)
        await expect(count).to_have_text("60 items shown")


# The selected item's history as the tab's chart draws it: the on-hand figure after each movement, the reorder line.
_HISTORY = """() => {
  const series = getElement(document.querySelector('[data-testid=stock-chart]').id.slice(1)).chart.getOption().series;
  return { kind: series.map((line) => line.type), onHand: series[0].data.map((point) => point[1]),
           reorder: (series[0].markLine?.data ?? []).map((line) => line.yAxis) };
}"""


async def test_selecting_another_item_draws_its_history_in_place_of_the_last_ones(
    agent: Client, view: OpenView, tab: Page
) -> None:
    panel = tab.get_by_test_id("item-panel")
    drawn: list[tuple[int, int]] = []
    try:
        for sku in ("TLS-2001", "ELE-4005", "TLS-2001"):  # the second and third merge their figures into the chart
            item = data_of(await call(agent, "inventory_select_item", _view=view.handle, sku=sku))
            await expect(panel).to_contain_text(sku)
            subtitle = tab.get_by_text(re.compile(r"on hand after each of the last \d+ movements"))
            count = int(re.findall(r"\d+", await subtitle.inner_text())[0])
            expected = {"kind": ["line"], "reorder": [item["reorder_point"]]}
            async with asyncio.timeout(5):  # the chart draws at most once a second
                while (history := await tab.evaluate(_HISTORY)) | expected != history or (
                    len(history["onHand"]) != count or history["onHand"][-1] != item["on_hand"]
                ):
                    await asyncio.sleep(0.1)
            drawn.append((count, item["reorder_point"]))
        assert drawn[0] != drawn[1] and drawn[0] == drawn[2], drawn  # two different histories, each drawn whole
    finally:
        await tab.locator("[data-testid=item-close]").click()  # unselected, as the shared view's other tests expect
        await expect(panel).to_contain_text("Pick an item")


async def test_a_selection_renders_the_item_panels_texts_again_not_its_close_button(
    agent: Client, view: OpenView, tab: Page
) -> None:
    panel = tab.get_by_test_id("item-panel")
    close = "[data-testid=item-close]"  # its tooltip is a component of its own
    try:
        await call(agent, "inventory_select_item", _view=view.handle, sku="ELE-4005")
        await expect(panel).to_contain_text("ELE-4005")
        await tab.evaluate(_COUNT_RENDERS, close)
        await call(agent, "inventory_select_item", _view=view.handle, sku="ELE-4006")
        await expect(panel).to_contain_text("ELE-4006")
        await tab.evaluate(_QUIET, 2)
        assert await tab.evaluate("(selector) => window.renders[selector]", close) == 0
    finally:
        await tab.locator(close).click()  # unselected, as the other tests of the shared view expect
        await expect(panel).to_contain_text("Pick an item")
