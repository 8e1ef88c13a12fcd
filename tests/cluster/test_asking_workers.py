"""A call forwarded to the worker holding the view's tab asks the person through the calling worker's client: the
owner answers the round "input required", the caller's MCP request asks (2025) or answers the round (2026), and the
next round carries the answers back to the owner. A round that asks gives its `_call_id` claim back; the answered
call's outcome is kept. The rest of what a forwarded call says to its client travels the same way (log messages),
and a view's change on one worker reaches the subscribers and listeners on another."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from typing import Any, Literal

import httpx2
import mcp_types
import pytest
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourceUpdated
from playwright.async_api import Page, expect

from tests.support.cluster import on_worker, two_workers
from tests.support.e2e import RunningServer
from tests.support.ops import scrape
from tests.support.redis import RedisServer
from tests.support.views import FAST, structured, texts

APP = "tests.support.asking_app:build"
FORWARDED = "webapp_forwarded_calls_total"
MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Iterator[tuple[RunningServer, ...]]:
    redis_server.flush()
    tokens = [arg for mode in MODES for arg in ("--token", f"{mode}={mode}-token")]
    db = tmp_path_factory.mktemp("asking") / "shared.db"
    with two_workers(redis_server.url, *FAST, *tokens, db=db, app=APP) as pair:
        yield pair


@pytest.mark.parametrize("mode", MODES)
async def test_a_forwarded_call_asks_the_person_through_the_calling_workers_client(
    workers: tuple[RunningServer, RunningServer], page: Page, mode: Literal["auto", "legacy"]
) -> None:
    one, two = workers
    asked: list[str] = []

    async def person(context: ClientRequestContext, params: mcp_types.ElicitRequestParams) -> Any:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"title": f"Named {mode}"})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {mode}-token"})
    transport = streamable_http_client(one.mcp_url, http_client=http)
    async with http, Client(transport, mode=mode, elicitation_callback=person) as agent:
        data = structured(await agent.call_tool("titled", {}))
        await page.goto(on_worker(str(data["url"]), two))  # the tab, and so the view, on the other worker
        await expect(page.get_by_test_id("title")).to_have_text("Untitled")
        before = await asyncio.to_thread(scrape, one.base_url + "/metrics")
        call = {"_view": data["view"], "_call_id": f"rename-{mode}"}
        renamed = await agent.call_tool("titled_rename", call)
        after = await asyncio.to_thread(scrape, one.base_url + "/metrics")
        again = await agent.call_tool("titled_rename", call)  # the asking round gave its claim back; this one kept it
    assert texts(renamed) == [f"Renamed to Named {mode}."], renamed
    assert texts(again) == texts(renamed) and asked == ["What should the title be?"]  # the kept outcome, not asked
    forwarded = {outcome: after.get(FORWARDED, kind="view", outcome=outcome) - before.get(FORWARDED, kind="view",
                 outcome=outcome) for outcome in ("asked", "answered")}  # fmt: skip
    assert forwarded == {"asked": 1, "answered": 1}  # the round that asked, the one with the answer
    await expect(page.get_by_test_id("title")).to_have_text(f"Named {mode}")


@contextlib.asynccontextmanager
async def _agent(server: RunningServer, mode: Literal["auto", "legacy"], **client: Any) -> AsyncGenerator[Client]:
    headers = {"Authorization": f"Bearer {mode}-token"}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(5, read=30))  # a listen stream may be quiet
    async with http, Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode, **client) as agent:
        yield agent


async def _on_two(agent: Client, page: Page, two: RunningServer) -> str:
    """A new view opened through `agent`, its tab (and so the view) on worker two; its handle."""
    data = structured(await agent.call_tool("titled", {}))
    await page.goto(on_worker(str(data["url"]), two))
    await expect(page.get_by_test_id("title")).to_have_text("Untitled")
    return str(data["view"])


@pytest.mark.parametrize("mode", MODES)
async def test_a_forwarded_calls_log_messages_of_the_callers_level_reach_its_client_before_the_reply(
    workers: tuple[RunningServer, RunningServer], page: Page, mode: Literal["auto", "legacy"]
) -> None:
    one, two = workers
    heard: list[tuple[str, Any]] = []

    async def collect(params: mcp_types.LoggingMessageNotificationParams) -> None:
        heard.append((params.level, params.data))

    level = {"log_level": "info"} if mode == "auto" else {}  # a 2025 session hears info and above until it says
    async with _agent(one, mode, logging_callback=collect, **level) as agent:
        view = await _on_two(agent, page, two)
        stamped = await agent.call_tool("titled_stamp", {"_view": view})
        assert heard == [("info", "Stamping the title")]  # in before the reply; debug never left the owner
    assert texts(stamped) == ["Stamped."], stamped


async def _until_told(act: Callable[[], Awaitable[object]], told: asyncio.Event) -> int:
    """Act until `told`, once a second at most five times: the other workers send resource changes once they know that
    a client hears of them (a heartbeat and a look later, ~2 s at most); how many times it acted."""
    for times in range(1, 6):
        await act()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(told.wait(), 1)
            return times
    raise AssertionError("the change was never told")


@pytest.mark.parametrize("mode", MODES)
async def test_a_subscriber_on_one_worker_hears_of_a_view_change_made_through_the_other(
    workers: tuple[RunningServer, RunningServer], page: Page, mode: Literal["auto", "legacy"]
) -> None:
    one, two = workers
    heard: list[str] = []
    told = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            heard.append(message.params.uri)
            told.set()

    async with _agent(one, mode, message_handler=on_message) as agent, _agent(two, mode) as other:
        view = await _on_two(agent, page, two)
        uri = f"webapp://views/{view}"

        async def stamp() -> None:  # run on worker two, where the tab is (each stamp changes the view's data)
            assert texts(await other.call_tool("titled_stamp", {"_view": view})) == ["Stamped."]

        if mode == "legacy":
            with pytest.warns(MCPDeprecationWarning):  # resources/subscribe is a 2025 method
                await agent.subscribe_resource(uri)  # pyright: ignore[reportDeprecated]
            await _until_told(stamp, told)
        else:
            async with agent.listen(resource_subscriptions=[uri, "webapp://views/nobodys"]) as subscription:

                async def hear() -> None:
                    async for event in subscription:
                        heard.append(event.uri if isinstance(event, ResourceUpdated) else repr(event))
                        told.set()

                hearing = asyncio.create_task(hear())
                await _until_told(stamp, told)
                hearing.cancel()
            assert subscription.honored.resource_subscriptions == [uri]  # an unknown view is not listened for
        read = await agent.read_resource(uri)
    assert set(heard) == {uri}
    assert '"title": "Stamped ' in str(read.contents[0]) and '"views": ' in str(read.contents[0])
