"""MCP Apps on the wire (apps.md §13): the opening tools' `ui://` resources with their CSP, the opening result's view
link and boot ticket for every client (never gated on the declared extension), and no adoption of a person's tab by
a client that declared it. The result widget that tools with a Presenter link: `test_result_view.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from mcp import Client
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID
from mcp.shared.exceptions import MCPError
from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer, run_server
from tests.support.embed import APPS_CLIENT
from tests.support.test_app import CounterView
from tests.support.views import COUNTER_APP, FAST, structured
from webapp.apps.naming import collect_app
from webapp.bridge.app_tools import VIEW_META
from webapp.embed import ShellResources


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(*FAST, app=COUNTER_APP, db=tmp_path_factory.mktemp("embed") / "views.db") as running:
        yield running


def expected_csp(origin: str) -> dict[str, list[str]]:
    socket = origin.replace("http://", "ws://")
    return {"connectDomains": [origin, socket], "resourceDomains": [origin], "frameDomains": [origin]}


async def test_only_opening_tools_carry_the_view_resource_and_tools_without_a_presenter_carry_none(
    server: RunningServer,
) -> None:
    async with Client(server.mcp_url) as client:
        tools = {tool.name: tool.meta for tool in (await client.list_tools()).tools}
        listed = [resource.uri for resource in (await client.list_resources()).resources]
    assert tools["counter"] == {"ui": {"resourceUri": "ui://counter/view"}}
    assert tools["notes"] == {"ui": {"resourceUri": "ui://notes/view"}}
    others = {name: meta for name, meta in tools.items() if name not in ("counter", "notes")}
    links = {name: (meta or {}).get("ui", {}).get("resourceUri") for name, meta in others.items()}
    assert others and not any(links.values()), links  # no other tool links a shell (an app-only tool says who sees it)
    assert "ui://webapp/result" not in listed  # no tool of this app has a Presenter (test_result_view.py)


async def test_the_resources_are_listed_and_read_with_their_csp_in_both_forms(server: RunningServer) -> None:
    csp = expected_csp(server.base_url)
    async with Client(server.mcp_url) as client:
        listed = {resource.uri: resource for resource in (await client.list_resources()).resources}
        read = await client.read_resource("ui://counter/view")
        with pytest.raises(MCPError, match="No resource has the URI 'ui://nothing/view'"):
            await client.read_resource("ui://nothing/view")
    assert set(listed) == {"ui://counter/view", "ui://notes/view"}
    for meta in [listed["ui://counter/view"].meta, read.contents[0].meta]:
        assert meta is not None
        assert meta["ui"] == {"csp": csp, "prefersBorder": False}
        assert meta["openai/widgetCSP"] == {
            "connect_domains": csp["connectDomains"],
            "resource_domains": csp["resourceDomains"],
            "frame_domains": csp["frameDomains"],
        }
    assert listed["ui://counter/view"].mime_type == read.contents[0].mime_type == APP_MIME_TYPE
    shell = getattr(read.contents[0], "text", "")
    assert shell.startswith("<!doctype html>") and "<script src" not in shell  # self-contained, nothing from a CDN
    urls = re.findall(r"https?://[^\"'\s<>]+", shell)
    assert urls and all(url.startswith(server.base_url) for url in urls), urls  # it frames our own origin only


async def test_every_client_gets_the_view_link_and_a_boot_ticket_in_the_result_meta_whatever_it_declared(
    server: RunningServer,
) -> None:
    # Some hosts show MCP Apps without declaring the extension (claude.ai was seen doing so): the shell they render
    # needs the link and the ticket all the same.
    async with Client(server.mcp_url, extensions=[APPS_CLIENT]) as inline, Client(server.mcp_url) as plain:
        shown = await inline.call_tool("notes", {})
        again = await plain.call_tool("notes", {})
    tickets: list[str] = []
    for result in (shown, again):
        data = structured(result)
        assert result.meta is not None and VIEW_META in result.meta
        ticket = result.meta[VIEW_META].pop("ticket")  # a one-time ticket that boots the page where frames are blocked
        assert result.meta[VIEW_META] == {"app": "notes", "view": data["view"], "url": data["url"]}
        assert isinstance(ticket, str) and len(ticket) == 43
        assert ticket not in str(result.content) and ticket not in str(result.structured_content)  # never for the model
        tickets.append(ticket)
    assert structured(again)["url"] == structured(shown)["url"]  # the same view, reused
    assert tickets[0] != tickets[1]  # each result has a ticket of its own


async def test_an_apps_client_never_adopts_a_tab_a_person_opened(server: RunningServer, page: Page) -> None:
    await page.goto(f"{server.base_url}/counter")
    await expect(page).to_have_url(re.compile(r"\?key="))
    person_key = page.url.split("key=")[1]
    async with Client(server.mcp_url, extensions=[APPS_CLIENT]) as inline:
        own = structured(await inline.call_tool("counter", {}))
        assert not own["reused"] and person_key not in own["url"]
        again = structured(await inline.call_tool("counter", {}))
        assert again["view"] == own["view"]  # its own view is reused (the newest frame attaches to it)
    async with Client(server.mcp_url) as plain:
        opened = await plain.call_tool("counter", {"_view": own["view"]})
        assert structured(opened)["reused"]
    await expect(page.get_by_test_id("count")).to_have_text("0")  # the person's tab is untouched


def test_a_declared_domain_and_a_public_https_base_url_shape_the_resource() -> None:
    app = collect_app(CounterView)
    shells = ShellResources(lambda: [app], lambda: "https://views.example.test/tools", domain="abc.example.test")
    meta = shells.resources()[0].meta
    assert meta is not None and meta["ui"]["domain"] == "abc.example.test"
    assert meta["ui"]["csp"]["connectDomains"] == ["https://views.example.test", "wss://views.example.test"]
    assert '"route": "/tools/counter"' in shells.shell(app)
    assert ShellResources.extensions == {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}
    assert shells.read("ui://other/view") is None
