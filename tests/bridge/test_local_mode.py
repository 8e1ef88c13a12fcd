"""The session bridge in local mode (loopback, auth off): routing by MCP session, the shared unbound views, adoption,
ended sessions and request cancellation. Each test gets its own fresh server (they start in under a second).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer, run_server
from tests.support.views import COUNTER_APP, FAST, attach_key, connect, not_open_text, structured, texts

MODES: tuple[Literal["auto", "legacy"], ...] = ("auto", "legacy")


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with run_server(*FAST, app=COUNTER_APP, db=tmp_path_factory.mktemp("local") / "views.db") as running:
        yield running


async def test_an_action_before_any_view_is_opened_answers_the_exact_not_open_text(server: RunningServer) -> None:
    for mode in MODES:
        async with connect(server, mode=mode) as client:
            result = await client.call_tool("counter_increment", {})
            assert result.is_error
            assert texts(result) == [not_open_text("counter")]
            assert texts(await client.call_tool("counter_update", {"title": "x"})) == [not_open_text("counter")]


async def test_another_legacy_session_never_reaches_the_first_sessions_view(server: RunningServer, page: Page) -> None:
    async with connect(server, mode="legacy") as first, connect(server, mode="legacy") as second:
        await page.goto(str(structured(await first.call_tool("counter", {}))["url"]))
        await expect(page.get_by_test_id("count")).to_have_text("0")
        assert texts(await second.call_tool("counter_increment", {})) == [not_open_text("counter")]
        async with connect(server) as sessionless:
            assert texts(await sessionless.call_tool("counter_increment", {})) == [not_open_text("counter")]
        assert structured(await first.call_tool("counter_increment", {})) == {"count": 1}
        await expect(page.get_by_test_id("count")).to_have_text("1")


async def test_a_sessionless_caller_is_told_to_choose_between_two_live_views(server: RunningServer, page: Page) -> None:
    second_tab = await page.context.new_page()
    for tab in (page, second_tab):
        await tab.goto(f"{server.base_url}/counter")
        await expect(tab.get_by_test_id("count")).to_have_text("0")
        await expect(tab).to_have_url(re.compile(r"\?key="))
    async with connect(server) as client:
        ambiguous = await client.call_tool("counter_increment", {})
        assert texts(ambiguous) == [
            '<tool_error code="VIEW_AMBIGUOUS" severity="error">\n'
            "<message>Several 'counter' views are open; pass _view to choose one.</message>\n"
            "<recovery>Call 'counter' to get the id of your view.</recovery>\n"
            "</tool_error>"
        ]
        opened = structured(await client.call_tool("counter", {}))
        assert (opened["state"], opened["reused"]) == ("pending", False)
        assert attach_key(str(opened["url"])) not in (attach_key(page.url), attach_key(second_tab.url))
    for tab in (page, second_tab):
        await expect(tab.get_by_test_id("count")).to_have_text("0")


async def test_an_opening_call_adopts_the_view_a_person_opened(server: RunningServer, page: Page) -> None:
    await page.goto(f"{server.base_url}/counter")
    await expect(page.get_by_test_id("title")).to_have_text("Counter")
    await expect(page).to_have_url(re.compile(r"\?key="))
    async with connect(server, mode="legacy") as client:
        adopted = structured(await client.call_tool("counter", {"title": "Adopted"}))
        assert (adopted["state"], adopted["reused"]) == ("live", True)
        assert attach_key(str(adopted["url"])) == attach_key(page.url)
        await expect(page.get_by_test_id("title")).to_have_text("Adopted")
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 1}
        await page.reload()
        await expect(page.get_by_test_id("count")).to_have_text("1")
        assert structured(await client.call_tool("counter_increment", {})) == {"count": 2}
        await expect(page.get_by_test_id("count")).to_have_text("2")


async def test_views_of_an_ended_legacy_session_stay_reachable_by_their_id(server: RunningServer, page: Page) -> None:
    async with connect(server, mode="legacy") as first:
        data = structured(await first.call_tool("counter", {}))
        await page.goto(str(data["url"]))
        assert structured(await first.call_tool("counter_increment", {})) == {"count": 1}
    async with connect(server, mode="legacy") as second:
        assert structured(await second.call_tool("counter_increment", {"_view": data["view"]})) == {"count": 2}
        assert structured(await second.call_tool("counter_increment", {})) == {"count": 3}  # unbound now
    await expect(page.get_by_test_id("count")).to_have_text("3")


async def test_a_cancelled_request_cancels_the_action_and_frees_the_view(server: RunningServer, page: Page) -> None:
    for count, mode in enumerate(MODES, start=1):
        async with connect(server, mode=mode) as client:
            opened = structured(await client.call_tool("counter", {}))
            if count == 1:
                await page.goto(str(opened["url"]))
            hanging = asyncio.create_task(client.call_tool("counter_hang", {}))
            await expect(page.get_by_test_id("status")).to_have_text("hanging")
            hanging.cancel()
            with pytest.raises(asyncio.CancelledError):
                await hanging
            await expect(page.get_by_test_id("status")).to_have_text("cancelled", timeout=3000)
            assert structured(await client.call_tool("counter_increment", {})) == {"count": count}


async def test_an_action_on_a_view_whose_tab_never_comes_answers_view_opening_in_bounded_time(tmp_path: Path) -> None:
    args = ("--wait-for-live", "0.5", "--pending-expiry", "600")
    with run_server(*args, app=COUNTER_APP, db=tmp_path / "opening.db") as server:
        async with connect(server) as client:
            await client.call_tool("counter", {})
            async with asyncio.timeout(5):
                opening = await client.call_tool("counter_increment", {})
        assert texts(opening) == [
            '<tool_error code="VIEW_OPENING" severity="error">\n'
            "<message>The view 'counter' is still opening: no browser has attached to it yet.</message>\n"
            "<recovery>Ask the user to open the view's URL, then retry.</recovery>\n"
            "</tool_error>"
        ]
