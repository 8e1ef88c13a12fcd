"""A call forwarded to the worker holding the view's tab asks the person through the calling worker's client: the
owner answers the round "input required", the caller's MCP request asks (2025) or answers the round (2026), and the
next round carries the answers back to the owner. A round that asks gives its `_call_id` claim back; the answered
call's outcome is kept."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Literal

import httpx2
import mcp_types
import pytest
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
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
