"""Two workers behind HAProxy with the shipped configuration: a legacy MCP session sticks to one worker, sessionless
calls spread over both and still drive a view whose tab the cookie keeps on one of them, and a frame that sends no
cookie reaches its page's worker with its socket."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, expect

from tests.support.e2e import RunningServer, mcp_client, run_server
from tests.support.haproxy import free_port, run_haproxy
from tests.support.light_tab import LightTab
from tests.support.redis import RedisServer
from tests.support.views import COUNTER_APP, FAST, structured, texts

_MCP_POST = re.compile(r'"POST /mcp HTTP/1.1" 200')


@pytest.fixture(scope="module")
def balanced(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer
) -> Iterator[tuple[str, RunningServer, RunningServer]]:
    """The balancer's URL and its two workers (every view link points at the balancer)."""
    db = tmp_path_factory.mktemp("balanced") / "shared.db"
    lb, one, two = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{lb}"
    argv = ("--redis-url", redis_server.url, "--base-url", base, *FAST)
    with (
        run_server(*argv, "--port", str(one), "--worker-id", "w1", app=COUNTER_APP, db=db) as first,
        run_server(*argv, "--port", str(two), "--worker-id", "w2", app=COUNTER_APP, db=db) as second,
        run_haproxy(lb, one, two),
    ):
        yield base, first, second


def mcp_posts(worker: RunningServer) -> int:
    return len(_MCP_POST.findall(worker.output))


async def test_fifty_calls_of_a_legacy_session_through_the_balancer_reach_its_worker(
    balanced: tuple[str, RunningServer, RunningServer],
) -> None:
    base, one, two = balanced
    before = mcp_posts(one), mcp_posts(two)
    async with mcp_client(base + "/mcp", mode="legacy") as agent:
        for number in range(50):
            assert texts(await agent.call_tool("ping", {})) == ["pong"], number  # a 404 would raise here
    grown = sorted((mcp_posts(one) - before[0], mcp_posts(two) - before[1]))
    assert grown[0] == 0 and grown[1] >= 50  # the whole session on one worker


async def test_sessionless_calls_spread_over_both_workers_and_drive_the_view_the_cookie_keeps_on_one(
    balanced: tuple[str, RunningServer, RunningServer], browser: Browser
) -> None:
    base, one, two = balanced
    context = await browser.new_context()
    try:
        page = await context.new_page()
        before = mcp_posts(one), mcp_posts(two)
        async with mcp_client(base + "/mcp") as agent:
            data = structured(await agent.call_tool("counter", {"title": "Balanced"}))
            assert str(data["url"]).startswith(base + "/counter?key=")
            await page.goto(str(data["url"]))
            await expect(page.get_by_test_id("title")).to_have_text("Balanced")
            for step in range(1, 11):
                bumped = await agent.call_tool("counter_increment", {"_view": data["view"]})
                assert structured(bumped) == {"count": step}
        await expect(page.get_by_test_id("count")).to_have_text("10")
        assert mcp_posts(one) > before[0] and mcp_posts(two) > before[1]  # so some calls crossed workers
        cookies = {cookie.get("name"): cookie.get("value") for cookie in await context.cookies()}
        assert cookies.get("WEBAPP_WORKER") in ("w1", "w2")
    finally:
        await context.close()


async def test_frames_that_send_no_cookie_reach_the_worker_of_their_page_through_the_balancer(
    balanced: tuple[str, RunningServer, RunningServer],
) -> None:
    """An embedded frame (an MCP Apps host's) may not send the stickiness cookie: its page and its socket still
    reach the same worker. Light tabs keep no cookies between the page and the socket, like such a frame."""
    base, _, _ = balanced
    tabs: list[LightTab] = []
    try:
        async with mcp_client(base + "/mcp") as agent:
            for number in range(4):  # consecutive requests: round-robin alone would split page and socket
                data = structured(await agent.call_tool("counter", {"title": f"Framed {number}"}))
                tab = LightTab(str(data["url"]))
                await tab.open()
                tabs.append(tab)
                bumped = await agent.call_tool("counter_increment", {"_view": data["view"]})
                assert not bumped.is_error and "count" in structured(bumped), texts(bumped)  # its tab confirmed
    finally:
        for tab in tabs:
            await tab.close()
