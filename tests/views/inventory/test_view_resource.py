"""The inventory view as the resource `webapp://views/{view}`: read through the official client without its tab, not
found for a handle that names no open view, and a person's search typed in the tab reaching a subscribed session."""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from playwright.async_api import Browser

from tests.support.e2e import RunningServer, mcp_client, mcp_client_with_token, run_server
from tests.views.inventory.support import INVENTORY_APP, OpenView, held_client, open_view

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_a_view_reads_as_its_warehouse_filters_and_figures(agent: Client, view: OpenView) -> None:
    templates = [t.uri_template for t in (await agent.list_resource_templates()).resource_templates]
    read = await agent.read_resource(f"webapp://views/{view.handle}")
    content = read.contents[0]
    assert isinstance(content, mcp_types.TextResourceContents) and content.mime_type == "application/json"
    data = json.loads(content.text)
    assert "webapp://views/{view}" in templates
    assert (data["app"], data["warehouse"], data["state"]) == ("inventory", "BER", "live")
    assert data["kpis"]["items"] > 0 and data["kpis"]["low_stock"] == len(data["low_stock_skus"])


async def test_an_open_view_is_listed_to_its_session_and_to_no_other(server: RunningServer, view: OpenView) -> None:
    async with held_client(server.mcp_url) as agent, held_client(server.mcp_url) as stranger:
        opened = await agent.call_tool("inventory", {"warehouse_code": "HAM"})
        handle = str((opened.structured_content or {})["view"])
        mine = {resource.uri: resource for resource in (await agent.list_resources()).resources}
        theirs = [resource.uri for resource in (await stranger.list_resources()).resources]
    listed = mine[f"webapp://views/{handle}"]
    assert listed.mime_type == "application/json" and listed.description
    assert not [uri for uri in theirs if uri.startswith("webapp://views/")]


async def test_a_handle_that_names_no_open_view_reads_as_not_found(agent: Client) -> None:
    with pytest.raises(MCPError) as missing:
        await agent.read_resource("webapp://views/not-a-view")
    assert (missing.value.code, missing.value.data) == (INVALID_PARAMS, {"uri": "webapp://views/not-a-view"})


async def test_a_persons_search_in_the_tab_reaches_a_subscribed_session(
    server: RunningServer, browser: Browser
) -> None:
    told: list[str] = []
    heard = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            told.append(message.params.uri)
            heard.set()

    context = await browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = await context.new_page()
        async with mcp_client(server, mode="legacy", message_handler=on_message) as agent:
            opened = await open_view(agent, page, warehouse_code="BER")
            with pytest.warns(MCPDeprecationWarning):  # resources/subscribe is a 2025 method
                await agent.subscribe_resource(f"webapp://views/{opened.handle}")  # pyright: ignore[reportDeprecated]
            await page.get_by_test_id("filter-search").fill("hex")
            await asyncio.wait_for(heard.wait(), 5)
            read = await agent.read_resource(f"webapp://views/{opened.handle}")
        content = read.contents[0]
        assert isinstance(content, mcp_types.TextResourceContents)
        assert json.loads(content.text)["search"] == "hex"
        assert told == [f"webapp://views/{opened.handle}"]
    finally:
        await context.close()


async def test_another_principals_view_reads_as_not_found_and_takes_no_subscription_or_listener(tmp_path: Path) -> None:
    ann, bob = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    tokens = ("--token", f"ann={ann}", "--token", f"bob={bob}")
    with run_server(*tokens, app=INVENTORY_APP, db=tmp_path / "inventory.db") as signed:
        async with mcp_client_with_token(signed, ann, mode="legacy") as owner:
            opened = await owner.call_tool("inventory", {"warehouse_code": "BER"})
            uri = f"webapp://views/{(opened.structured_content or {})['view']}"
            assert json.loads(_text(await owner.read_resource(uri)))["warehouse"] == "BER"
            async with mcp_client_with_token(signed, bob, mode="legacy") as other:
                with pytest.raises(MCPError) as read:
                    await other.read_resource(uri)
                with pytest.warns(MCPDeprecationWarning), pytest.raises(MCPError) as subscribed:
                    await other.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
                listed = [resource.uri for resource in (await other.list_resources()).resources]
            async with (
                mcp_client_with_token(signed, bob) as listener,  # 2026: subscriptions/listen
                listener.listen(resource_subscriptions=[uri]) as listening,
            ):
                honored = listening.honored.resource_subscriptions
            async with (
                mcp_client_with_token(signed, ann) as own,
                own.listen(resource_subscriptions=[uri]) as owned,
            ):
                assert owned.honored.resource_subscriptions == [uri]  # its owner's is honoured
    assert (read.value.code, read.value.data) == (INVALID_PARAMS, {"uri": uri})
    assert (subscribed.value.code, subscribed.value.data) == (INVALID_PARAMS, {"uri": uri})
    assert uri not in listed
    assert not honored  # the listen stream leaves it out


def _text(result: mcp_types.ReadResourceResult) -> str:
    content = result.contents[0]
    assert isinstance(content, mcp_types.TextResourceContents)
    return content.text
