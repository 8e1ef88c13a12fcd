"""The result widget `ui://webapp/result` on the wire (rendering.md §4): which tools link it, the `result_view`
option, its listing with an empty CSP, the built page it serves, and results unchanged for every client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.apps import APP_MIME_TYPE
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from tests.support.embed import APPS_CLIENT
from tests.support.tool_samples import ITEMS, ROW, ItemId, get_item
from views.inventory import build as build_inventory
from webapp import Tool, WebApp, mcp_app, mcp_app_action
from webapp.apps.definition import McpAppUpdateEvent
from webapp.apps.naming import collect_app
from webapp.bridge.app_tools import app_tools
from webapp.bridge.dispatch import Bridge, BridgeSettings
from webapp.bridge.store import ViewStore
from webapp.core.settings import Settings
from webapp.embed import ResultWidget

RESULT = {"ui": {"resourceUri": "ui://webapp/result"}}


class Filter(BaseModel):
    search: str = ""


@mcp_app(description="Shows a shelf of items.", route="/shelf", name="shelf", input=Filter)
class ShelfView:
    async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> None:
        pass

    @mcp_app_action(description="Gets an item.", returns=ITEMS)
    def get(self, params: ItemId) -> dict[str, Any]:
        return get_item(params)

    @mcp_app_action(description="Counts the items.")
    def count(self) -> int:
        return 1

    @mcp_app_action(description="Gets an item, shown as text.", returns=ITEMS, result_view=False)
    def get_text(self, params: ItemId) -> dict[str, Any]:
        return get_item(params)

    @mcp_app_action(description="Reports the items.", result_view=True)
    def report(self) -> str:
        return "1 item"


def plain_tools() -> list[Tool]:
    return [
        Tool("item", description="Gets an item.", handler=get_item, input=ItemId, returns=ITEMS),
        Tool("items", description="Items.").action("get", get_item, input=ItemId, returns=ITEMS).action("n", len),
        Tool("ping", description="Answers pong.", handler=lambda: "pong"),
        Tool("quiet", description="Gets an item.", handler=get_item, input=ItemId, returns=ITEMS, result_view=False),
        Tool("chart", description="Draws a chart.", handler=lambda: "a chart", result_view=True),
    ]


def server(tmp_path: Path, tools: list[Tool], *, apps: bool = True) -> WebApp:
    settings = Settings(db=tmp_path / "views.db", port=0)
    webapp = WebApp(settings)
    for tool in tools:
        webapp.add_tool(tool)
    if apps:
        bridge = Bridge(BridgeSettings.from_settings(settings), ViewStore(settings.db))
        for tool in app_tools(collect_app(ShelfView), bridge):
            webapp.add_tool(tool)
    return webapp


async def test_tools_with_a_presenter_link_the_result_view_and_opening_and_update_tools_keep_theirs(
    tmp_path: Path,
) -> None:
    async with Client(server(tmp_path, plain_tools()).mcp) as client:
        metas = {tool.name: tool.meta for tool in (await client.list_tools()).tools}
    assert metas == {
        "item": RESULT,
        "items": RESULT,  # one of its actions has a Presenter
        "ping": None,
        "quiet": None,  # result_view=False
        "chart": RESULT,  # result_view=True
        "shelf": {"ui": {"resourceUri": "ui://shelf/view"}},  # the opening tool shows the live view
        "shelf_update": None,
        "shelf_get": RESULT,
        "shelf_count": None,
        "shelf_get_text": None,  # result_view=False
        "shelf_report": RESULT,  # result_view=True
    }


async def test_the_widget_is_listed_with_an_empty_csp_only_while_some_tool_links_it(tmp_path: Path) -> None:
    unlinked = [tool for tool in plain_tools() if tool.name in ("ping", "quiet")]
    async with Client(server(tmp_path / "a", unlinked, apps=False).mcp) as client:
        assert (await client.list_resources()).resources == []
        with pytest.raises(MCPError, match="No resource has the URI 'ui://webapp/result'"):
            await client.read_resource("ui://webapp/result")
    async with Client(server(tmp_path / "b", plain_tools()).mcp) as client:
        listed = {resource.uri: resource for resource in (await client.list_resources()).resources}
    widget = listed["ui://webapp/result"]
    assert set(listed) == {"ui://webapp/result"}
    assert widget.mime_type == APP_MIME_TYPE and widget.meta is not None
    assert widget.meta["ui"] == {"csp": {}, "prefersBorder": False}  # the page asks for no domain at all
    assert widget.meta["openai/widgetCSP"] == {"connect_domains": [], "resource_domains": [], "frame_domains": []}


CONFIG = '<script type="application/json" id="webapp-result-config">{}</script>'


def test_the_widget_serves_the_built_page_and_says_how_to_build_it_when_it_is_missing(tmp_path: Path) -> None:
    page = tmp_path / "widget.html"
    widget = ResultWidget(plain_tools, lambda: "http://127.0.0.1:8123", domain="abc.example.test", page=page)
    with pytest.raises(MCPError, match=r"The result view is not built .*Fix: run `make run`"):
        widget.read("ui://webapp/result")
    page.write_text(f"<!doctype html><p>widget</p>{CONFIG}", encoding="utf-8")
    read = widget.read("ui://webapp/result")
    assert read is not None and read.contents[0].mime_type == APP_MIME_TYPE
    assert getattr(read.contents[0], "text", "") == f"<!doctype html><p>widget</p>{CONFIG}".replace(
        "{}", '{"viewerUrl": null}'
    )
    assert read.contents[0].meta is not None and read.contents[0].meta["ui"]["domain"] == "abc.example.test"
    assert widget.read("ui://webapp/other") is None
    unlinked = ResultWidget(lambda: [plain_tools()[2]], lambda: "", domain=None, page=page)
    assert unlinked.read("ui://webapp/result") is None


def test_the_widget_links_mermaid_diagrams_to_the_viewer_when_there_is_one(tmp_path: Path) -> None:
    page = tmp_path / "widget.html"
    page.write_text(f"<p>{CONFIG}</p><script>const config = {CONFIG!r};</script>", encoding="utf-8")
    widget = ResultWidget(plain_tools, lambda: "http://127.0.0.1:8123/<x>", domain=None, page=page)
    widget.viewer_path = "/viewer"
    expected = '{"viewerUrl": "http://127.0.0.1:8123/\\u003cx>/viewer"}'
    assert widget.html() == f"<p>{CONFIG.replace('{}', expected)}</p><script>const config = {CONFIG!r};</script>"


async def test_a_client_with_mcp_apps_gets_the_same_result_as_one_without(tmp_path: Path) -> None:
    webapp = server(tmp_path, plain_tools(), apps=False)
    async with Client(webapp.mcp, extensions=[APPS_CLIENT]) as inline, Client(webapp.mcp) as plain:
        shown = await inline.call_tool("item", {"sku": "A-1"})
        again = await plain.call_tool("item", {"sku": "A-1"})
    assert shown.model_dump() == again.model_dump()
    assert not shown.is_error and str(ROW["name"]) in str(shown.content[0])


async def test_every_inventory_action_and_the_warehouses_tool_link_the_result_view(tmp_path: Path) -> None:
    webapp = WebApp(Settings(db=tmp_path / "inventory.db", port=0))
    build_inventory(webapp)
    async with Client(webapp.mcp) as client:
        metas = {tool.name: tool.meta for tool in (await client.list_tools()).tools}
    assert metas.pop("inventory") == {"ui": {"resourceUri": "ui://inventory/view"}}
    assert metas.pop("inventory_update") is None
    for name in ("webapp_tunnel_open", "webapp_tunnel_http", "webapp_tunnel_close"):  # a view's own, not results
        assert metas.pop(name) == {"ui": {"visibility": ["app"]}}
    assert metas == dict.fromkeys(metas, RESULT) and len(metas) == 7  # six actions and `warehouses`
