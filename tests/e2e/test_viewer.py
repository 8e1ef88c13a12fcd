"""The viewer in Chromium: every block rendered from the wire text, error cards, no script from a result, the live
list, "try a tool", history after a restart, per-principal views with auth, and the inventory round trip."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer, mcp_client, run_server
from tests.support.viewer_app import FOCUS_VIEW
from webapp.viewer.try_panel import call_over_mcp

APP = "tests.support.viewer_app:build"
WAIT = 10_000  # ms: the bound of every wait for the browser
ALICE, BOB = "alice-token-0123456789", "bob-token-9876543210"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(app=APP, db=tmp_path_factory.mktemp("viewer") / "app.db") as running:
        yield running


async def _call(server: RunningServer, tool: str, arguments: dict[str, Any] | None = None) -> None:
    async with mcp_client(server) as client:
        await client.call_tool(tool, arguments or {})


async def _open(page: Page, server: RunningServer, query: str = "") -> None:
    await page.goto(f"{server.base_url}/viewer{query}")
    await expect(page.locator(".wv-detail-pane")).to_be_visible(timeout=WAIT)


async def _pick(page: Page, tool: str) -> None:
    """Open "try a tool" and choose `tool` from the tool menu."""
    await page.get_by_role("button", name="Try a tool").click()
    option = page.get_by_role("option", name=tool, exact=True)
    for _ in range(5):  # a click while the dialog is still opening can be lost: open the menu again, bounded
        await page.locator(".wv-try-tool .q-field__control").click()
        with contextlib.suppress(AssertionError):
            await expect(option).to_be_visible(timeout=2_000)
            break
    await option.click()


async def _try(page: Page, tool: str, fields: dict[str, str] | None = None) -> None:
    await _pick(page, tool)
    for name, value in (fields or {}).items():
        await page.locator(f"input[data-field={name}]").fill(value)
    await page.get_by_role("button", name="Call").click()


async def _chart_canvases(page: Page, count: int) -> None:
    charts = page.locator(".wv-chart")
    await expect(charts).to_have_count(count, timeout=WAIT)
    for index in range(count):
        await expect(charts.nth(index).locator("canvas").first).to_be_attached(timeout=WAIT)


async def test_a_rich_response_renders_every_block_in_priority_order(
    server: RunningServer, page: Page, tmp_path: Path
) -> None:
    await _call(server, "report")
    await page.set_viewport_size({"width": 1440, "height": 1000})
    await _open(page, server, "?tool=report")
    await expect(page.locator(".wv-detail-tool")).to_have_text("report", timeout=WAIT)
    await _chart_canvases(page, 2)
    await expect(page.locator(".wv-markdown td").first).to_have_text("A-100", timeout=WAIT)
    await expect(page.locator(".wv-markdown td")).to_have_text(["A-100", "42", "B-7", "0"])
    await expect(page.locator(".wv-mermaid svg")).to_be_attached(timeout=WAIT)
    await expect(page.locator(".wv-summary")).to_contain_text("2 items, 1 out of stock")
    titles = ["Stock table", "Stock by month", "Stock by week", "Reorder list", "Flow", "Query"]
    await expect(page.locator(".wv-block-title")).to_have_text(titles)
    first_ui = page.locator(".wv-ui-grid > .wv-block").first
    await expect(first_ui.locator(".wv-summary")).to_be_attached()  # priority 0 comes first
    await expect(page.locator(".wv-llm_directives li")).to_have_text(["Ask before reordering."])
    await expect(page.locator(".wv-domain_rules li")).to_have_text(
        ["Quantities are units, never boxes.", "Never promise a delivery date."]
    )
    suggestion = page.locator(".wv-action_suggestions li")
    await expect(suggestion.locator(".wv-tool-chip")).to_have_text("inventory_refresh_stock")
    await expect(suggestion).to_contain_text("Refresh the stock of one item.")
    await expect(page.locator(".wv-json")).to_have_count(2)  # the data block and the `json` block
    await expect(page.locator(".wv-code")).to_contain_text("SELECT sku FROM stock")

    grid = await page.locator(".wv-ui-grid").bounding_box()
    half = await page.locator(".wv-w-half").first.bounding_box()
    third = await page.locator(".wv-w-third").first.bounding_box()
    assert grid and half and third
    assert 0.4 < half["width"] / grid["width"] < 0.55
    assert 0.25 < third["width"] / grid["width"] < 0.38

    await page.screenshot(path=str(tmp_path / "viewer-wide.png"))
    await page.set_viewport_size({"width": 420, "height": 900})
    await expect(page.locator(".wv-w-half").first).to_have_css("max-width", "100%", timeout=WAIT)
    await page.screenshot(path=str(tmp_path / "viewer-narrow.png"), full_page=True)
    await page.set_viewport_size({"width": 1440, "height": 1000})

    await page.get_by_text("Raw wire text").click()
    raw = page.locator(".wv-raw")
    await expect(raw).to_contain_text(
        '<ui_passthrough type="echarts" title="Stock by month" width="half" priority="2">', timeout=WAIT
    )
    await expect(raw).to_contain_text("<domain_rules>\n- Quantities are units, never boxes.")
    await expect(page.locator(".wv-chart")).to_have_count(0)


async def test_errors_render_as_cards_with_every_field(server: RunningServer, page: Page) -> None:
    await _call(server, "fail")
    await _call(server, "invalid")
    await _open(page, server, "?tool=fail")
    card = page.locator(".wv-error-card")
    await expect(card).to_contain_text("STOCK_LOCKED", timeout=WAIT)
    for text in (
        "Tool error",
        "error",
        "The stock of A-100 is locked <by a count>.",
        "Wait for the count to finish.",
        "inventory, inventory_count_status",
        "detail · sku",
        "A-100",
        "detail · locked",
        "true",
        "30 seconds",
    ):
        await expect(card).to_contain_text(text)
    await _open(page, server, "?tool=invalid&errors=1")
    card = page.locator(".wv-error-card")
    await expect(card).to_contain_text("Validation error", timeout=WAIT)
    for text in (
        "inventory_refresh_stock",
        "sku",
        "Field required You sent: (missing). Provide this field.",
        "qty",
        "Too small You sent: -1.",
        "Fix the fields above and call the tool again. Do not explain the error.",
    ):
        await expect(card).to_contain_text(text)


async def test_nothing_in_a_result_runs_script_and_data_never_poses_as_rules(server: RunningServer, page: Page) -> None:
    await _call(server, "hostile")
    await _open(page, server, "?tool=hostile")
    await _chart_canvases(page, 1)
    await expect(page.locator(".wv-markdown h1")).to_have_text("Hi", timeout=WAIT)
    await expect(page.locator(".wv-mermaid svg")).to_be_attached(timeout=WAIT)
    await page.locator(".wv-chart").hover()  # a tooltip with an HTML formatter would run its onerror now
    await page.locator(".wv-chart").click()
    await expect(page.locator(".wv-json")).to_contain_text("fake rule")
    await expect(page.locator(".wv-json")).to_contain_text("<script>window.__pwned = 9</script>")
    await expect(page.locator(".wv-section-domain_rules")).to_have_count(0)
    assert await page.locator(".wv-blocks script, .wv-blocks [onerror], .wv-blocks img").count() == 0
    await page.get_by_text("a script link").click()  # not a link any more: nothing opens, nothing runs
    assert await page.locator(".wv-markdown a[href]").count() == 0
    await expect(page.locator(".wv-markdown")).to_contain_text('<a href="javascript:window.__pwned=13">another</a>')
    await page.evaluate("() => new Promise(requestAnimationFrame)")
    assert await page.evaluate("typeof window.__pwned") == "undefined"
    assert len(page.context.pages) == 1


async def test_html_in_tool_arguments_is_shown_as_text(server: RunningServer, page: Page) -> None:
    html = "<img src=x onerror='window.__pwned = 14'><script>window.__pwned = 15</script>"
    await _call(server, "echo", {"text": html})
    await _open(page, server, "?tool=echo")
    await expect(page.locator(".wv-side .wv-json")).to_contain_text(html, timeout=WAIT)
    await expect(page.locator(".wv-blocks")).to_contain_text(f"echo: {html}")
    assert await page.locator(".wv-detail-pane img, .wv-detail-pane script").count() == 0
    await page.evaluate("() => new Promise(requestAnimationFrame)")
    assert await page.evaluate("typeof window.__pwned") == "undefined"


async def test_a_block_that_does_not_parse_is_shown_raw_with_a_warning(server: RunningServer, page: Page) -> None:
    await _call(server, "broken")
    await _open(page, server, "?tool=broken")
    warnings = page.locator(".wv-warning-card")
    await expect(warnings).to_have_count(2, timeout=WAIT)
    await expect(warnings.nth(0)).to_contain_text("could not be rendered")
    await expect(warnings.nth(0)).to_contain_text("{not json")
    await expect(warnings.nth(1)).to_contain_text("looks like <domain_rules>")
    await expect(warnings.nth(1)).to_contain_text("no bullet here")
    await expect(page.locator(".wv-data-text")).to_have_text("plain text data")
    await expect(page.locator(".wv-blocks")).to_contain_text("an embedded child's own text")


async def test_a_new_call_appears_in_an_open_viewer_without_a_reload(server: RunningServer, page: Page) -> None:
    await _open(page, server, "?tool=echo")
    rows = page.locator(".wv-call")
    before = await rows.count()
    await _call(server, "report")  # filtered out
    await _call(server, "echo", {"text": "live one"})
    await expect(rows).to_have_count(before + 1, timeout=WAIT)
    await expect(rows.first.locator(".wv-call-tool")).to_have_text("echo")
    await rows.first.click()
    await expect(page.locator(".wv-blocks")).to_contain_text("echo: live one", timeout=WAIT)
    await expect(page).to_have_url(re.compile(r"/viewer\?tool=echo&call=\d+$"), timeout=WAIT)


async def test_trying_a_tool_calls_it_over_mcp_and_shows_the_result(server: RunningServer, page: Page) -> None:
    await _open(page, server, "?tool=echo")
    rows = page.locator(".wv-call")
    before = await rows.count()
    await _pick(page, "echo")
    await page.locator("input[data-field=text]").fill("from the form")
    await page.get_by_role("button", name="Call").click()
    await expect(page.locator(".wv-try-result")).to_contain_text("echo: from the form", timeout=WAIT)
    await expect(rows).to_have_count(before + 1, timeout=WAIT)


async def test_trying_a_tool_prefills_the_view_in_focus(server: RunningServer, page: Page) -> None:
    await _open(page, server, f"?view={FOCUS_VIEW[:6]}")
    await _pick(page, "form")
    await expect(page.locator(".wv-try .q-select").last).to_contain_text(f"form · {FOCUS_VIEW[:6]}…", timeout=WAIT)
    await page.locator("input[data-field=text]").fill("hi")
    await page.locator("textarea[data-field=tags]").fill('["a", "b"]')
    await page.get_by_role("button", name="Call").click()
    await expect(page.locator(".wv-try-result")).to_contain_text("form ok", timeout=WAIT)
    row = page.locator(".wv-call").first
    await expect(row).to_contain_text(f"view {FOCUS_VIEW[:6]}…", timeout=WAIT)
    await page.keyboard.press("Escape")
    await row.click()
    side = page.locator(".wv-side")
    await expect(side).to_contain_text("received", timeout=WAIT)
    await expect(side).to_contain_text(f"{FOCUS_VIEW[:6]}…")
    assert FOCUS_VIEW not in await page.content()


async def test_the_history_survives_a_restart(tmp_path: Path, page: Page) -> None:
    db = tmp_path / "app.db"
    with run_server(app=APP, db=db) as first:
        await _call(first, "report")
        await _call(first, "echo", {"text": "before the restart"})
    with run_server(app=APP, db=db) as second:
        await _open(page, second)
        rows = page.locator(".wv-call")
        await expect(rows).to_have_count(2, timeout=WAIT)
        await expect(rows.locator(".wv-call-tool")).to_have_text(["echo", "report"])
        await _call(second, "echo", {"text": "after"})
        await expect(rows).to_have_count(3, timeout=WAIT)
        await rows.nth(2).click()
        await _chart_canvases(page, 2)


async def test_with_auth_on_the_viewer_asks_for_a_token_and_shows_only_that_principals_calls(
    tmp_path: Path, page: Page
) -> None:
    tokens = ("--token", f"alice={ALICE}", "--token", f"bob={BOB}")
    with run_server(*tokens, app=APP, db=tmp_path / "app.db") as server:
        await call_over_mcp(server.mcp_url, "echo", {"text": "from alice"}, token=ALICE)
        await call_over_mcp(server.mcp_url, "echo", {"text": "from bob"}, token=BOB)
        await page.goto(f"{server.base_url}/viewer")
        token = page.get_by_label("Token")
        await token.fill("not-a-token")
        await token.press("Enter")
        await expect(page.get_by_text("That token is not valid.")).to_be_visible(timeout=WAIT)
        await token.fill(ALICE)
        await page.get_by_role("button", name="Show my calls").click()
        rows = page.locator(".wv-call")
        await expect(rows).to_have_count(1, timeout=WAIT)
        await expect(rows.first).to_contain_text("alice")
        await expect(page.locator(".wv-blocks")).to_contain_text("echo: from alice")
        await call_over_mcp(server.mcp_url, "echo", {"text": "bob again"}, token=BOB)
        await _pick(page, "echo")
        await page.locator("input[data-field=text]").fill("alice tries")
        await page.get_by_role("button", name="Call").click()
        await expect(rows).to_have_count(2, timeout=WAIT)
        await expect(rows.first).to_contain_text("alice")
        await page.reload()  # the cookie keeps the viewer session
        await expect(page.locator(".wv-call")).to_have_count(2, timeout=WAIT)
        assert "bob" not in (await page.locator(".wv-list").inner_text())
        await page.locator(".wv-header .q-btn").filter(has_text="logout").click()
        await expect(page.get_by_label("Token")).to_be_visible(timeout=WAIT)


async def test_try_a_tool_drives_the_open_inventory_view(tmp_path: Path, page: Page) -> None:
    with run_server(app="tests.support.viewer_app:build_inventory", db=tmp_path / "inventory.db") as server:
        inventory = await page.context.new_page()
        await inventory.goto(f"{server.base_url}/inventory")
        count = inventory.locator("[data-testid=row-count]")
        await expect(count).not_to_have_text("0 items shown", timeout=WAIT)
        link = await inventory.locator("[data-testid=viewer-link]").get_attribute("href")
        assert link is not None and link.startswith("/viewer?view=")
        await page.goto(server.base_url + link)
        await page.bring_to_front()  # Chromium runs a page behind a newer one at one animation frame a second
        await expect(page.locator(".wv-links a[href='/inventory']")).to_be_visible(timeout=WAIT)
        await _try(page, "inventory_refresh_stock")
        result = page.locator(".wv-try-result")
        await expect(result.locator(".wv-json")).to_be_visible(timeout=WAIT)
        await expect(result.locator(".wv-error-card")).to_have_count(0)
        await page.reload()
        await _try(page, "inventory_update", {"search": "no-such-item-xyz"})
        await expect(count).to_have_text("0 items shown", timeout=WAIT)
        await expect(page.locator(".wv-try-result")).not_to_contain_text("Tool error")
        await page.goto(f"{server.base_url}{link}&tool=inventory_refresh_stock")  # the view's own calls
        await expect(page.locator(".wv-detail-tool")).to_have_text("inventory_refresh_stock", timeout=WAIT)
        await expect(page.locator(".wv-badge-ok")).to_be_visible()
        await expect(page.locator(".wv-call")).to_have_count(1)
        await inventory.close()


_RENDER = """async ([texts, options]) => {
    const viewer = await import('/static/dist/viewer.js');
    window.opened = [];
    window.suggested = [];
    const box = document.createElement('div');
    box.id = 'rendered';
    document.body.prepend(box);
    await viewer.renderBlocks(box, viewer.parseBlocks(texts), {
        ...options,
        openLink: (url) => window.opened.push(url),
        suggest: (tool, reason) => window.suggested.push([tool, reason]),
    });
}"""


def _ui_block(kind: str, body: str, title: str = "") -> str:
    fenced = body if kind in ("markdown", "summary") else f"```{kind}\n{body}\n```"
    title_attribute = f' title="{title}"' if title else ""
    return f'<ui_passthrough type="{kind}"{title_attribute}>\n{fenced}\n</ui_passthrough>'


async def _render(page: Page, server: RunningServer, texts: list[str], options: dict[str, Any] | None = None) -> None:
    await _open(page, server, "?tool=none")
    await page.evaluate(_RENDER, [texts, options or {}])


async def test_a_big_table_shows_its_first_rows_at_once_and_the_rest_on_demand(
    server: RunningServer, page: Page
) -> None:
    rows = "\n".join(f"| {i} | item {i} |" for i in range(10_000))
    await _render(page, server, ["{}", _ui_block("markdown", f"| # | name |\n| --- | --- |\n{rows}")])
    table = page.locator("#rendered .wv-markdown tbody tr")
    await expect(table).to_have_count(200, timeout=WAIT)
    more = page.locator("#rendered .wv-more")
    await expect(more).to_have_text("Show 1,000 more rows (9,800 not shown)")
    await more.click()
    await expect(table).to_have_count(1200)
    await expect(table.last).to_contain_text("item 1199")
    await expect(more).to_have_text("Show 1,000 more rows (8,800 not shown)")


async def test_twenty_charts_are_drawn_and_a_block_that_fails_shows_its_text_and_why(
    server: RunningServer, page: Page
) -> None:
    chart = (
        '{"xAxis": {"type": "category", "data": ["a", "b"]}, "yAxis": {}, "series": [{"type": "bar", "data": [1, 2]}]}'
    )
    radar = '{"series": [{"type": "radar", "data": []}]}'
    texts = [
        "{}",
        *(_ui_block("echarts", chart) for _ in range(20)),
        _ui_block("echarts", radar),
        _ui_block("json", "{x"),
    ]
    await _render(page, server, texts)
    await expect(page.locator("#rendered .wv-chart canvas")).to_have_count(20, timeout=WAIT)
    warnings = page.locator("#rendered .wv-warning-card")
    await expect(warnings).to_have_count(2)
    await expect(warnings.nth(0)).to_contain_text('series type "radar" is not drawn here')
    await expect(warnings.nth(0)).to_contain_text('"type": "radar"')
    await expect(warnings.nth(1)).to_contain_text("This json block could not be rendered")
    await expect(warnings.nth(1)).to_contain_text("{x")


async def test_links_open_only_through_the_callers_function_and_only_http(server: RunningServer, page: Page) -> None:
    markdown = (
        "[docs](https://example.org/docs) [local](/viewer) [mail](mailto:a@b.c) ![pic](https://example.org/p.png)"
    )
    suggestions = "<action_suggestions>\n- inventory: Open the view.\n</action_suggestions>"
    await _render(page, server, ["{}", _ui_block("markdown", markdown), suggestions])
    await page.get_by_text("docs").click()
    await page.get_by_text("local").click()
    await page.get_by_text("mail").click()
    await page.get_by_text("image: pic").click()
    await page.locator("#rendered .wv-tool-chip").click()
    assert await page.evaluate("window.opened") == ["https://example.org/docs", "https://example.org/p.png"]
    assert await page.evaluate("window.suggested") == [["inventory", "Open the view."]]
    assert await page.locator("#rendered img").count() == 0
    assert len(page.context.pages) == 1


async def test_the_theme_and_the_hosts_style_variables_apply(server: RunningServer, page: Page) -> None:
    variables = {"--color-background-primary": "rgb(1, 2, 3)", "--color-text-primary": "rgb(250, 251, 252)"}
    mermaid = _ui_block("mermaid", "graph TD\n  A --> B")
    await _render(
        page, server, ["{}", mermaid], {"theme": "dark", "variables": variables, "viewerUrl": "https://x.org/viewer"}
    )
    rendered = page.locator("#rendered")
    await expect(rendered).to_have_class(re.compile(r"\bwv-dark\b"))
    await expect(rendered.locator(".wv-block").first).to_have_css("background-color", "rgb(1, 2, 3)")
    await expect(rendered).to_have_css("color", "rgb(250, 251, 252)")
    await expect(rendered.locator(".wv-code")).to_contain_text("graph TD")  # no Mermaid given: its source
    await rendered.get_by_text("See the diagram in the call viewer").click()
    assert await page.evaluate("window.opened") == ["https://x.org/viewer"]


async def test_the_browser_files_are_served_under_the_host_and_origin_rules(server: RunningServer) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        wire = await http.get("/static/wire.js")
        assert wire.status_code == 200 and "export function parseBlocks" in wire.text
        assert (await http.get("/static/dist/viewer.js")).status_code == 200
        assert (await http.get("/static/dist/viewer.js", headers={"Host": "evil.example"})).status_code >= 400
        assert (await http.get("/static/wire.js", headers={"Origin": "https://evil.example"})).status_code >= 400
        assert (await http.get("/static/%2e%2e/pyproject.toml")).status_code == 404


async def test_a_suggestion_chip_opens_try_a_tool(server: RunningServer, page: Page) -> None:
    await _call(server, "report")
    await _open(page, server, "?tool=report")
    chip = page.locator(".wv-action_suggestions .wv-tool-chip")
    await expect(chip).to_have_text("inventory_refresh_stock", timeout=WAIT)
    await chip.click()
    await expect(page.locator(".wv-try")).to_be_visible(timeout=WAIT)
    await expect(page.locator(".wv-try-title")).to_have_text("Try a tool")
