"""A tunnelled view with two workers behind HAProxy: the host's sessionless calls alternate between the workers, so
every other tunnel call lands on the worker that does not hold the view's page and reaches the one that does through
its inbox (the shared directory says which); while that worker cannot be reached, such a call answers a retryable
code, never the one that means the tunnel is gone."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
import pytest_asyncio
from mcp import Client
from playwright.async_api import Browser, expect

from tests.support.claude_host import ClaudeHost, serve_claude_host
from tests.support.e2e import RunningServer, mcp_client, run_server
from tests.support.embed import low_stock_sku
from tests.support.haproxy import free_port, run_haproxy
from tests.support.redis import RedisServer
from tests.support.tunnel_host import Host, on_hand, open_host, show, view_frame, view_in
from tests.support.views import connect, structured, texts
from tests.views.inventory.support import INVENTORY_APP, call

_TUNNEL_POST = re.compile(r'"POST /mcp HTTP/1.1" 200')
Balanced = tuple[str, RunningServer, RunningServer, Path, ClaudeHost]
TIMINGS = ("--reconnect-grace", "2", "--wait-for-live", "5", "--call-timeout", "3")


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Iterator[Balanced]:
    """The balancer's URL, its two workers, their database and the harness host."""
    folder = tmp_path_factory.mktemp("tunnel-workers")
    lb, one, two = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{lb}"
    argv = ("--redis-url", redis_server.url, "--base-url", base, *TIMINGS)
    with (
        run_server(*argv, "--port", str(one), "--worker-id", "w1", app=INVENTORY_APP, db=folder / "shared.db") as w1,
        run_server(*argv, "--port", str(two), "--worker-id", "w2", app=INVENTORY_APP, db=folder / "shared.db") as w2,
        run_haproxy(lb, one, two),
        serve_claude_host(tmp_path_factory.mktemp("host")) as harness,
    ):
        yield base, w1, w2, folder / "shared.db", harness


@pytest_asyncio.fixture(loop_scope="session")
async def host(browser: Browser, balanced: Balanced) -> AsyncIterator[Host]:
    context = await browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        yield await open_host(context, balanced[4])
    finally:
        await context.close()


def posts(worker: RunningServer) -> int:
    return len(_TUNNEL_POST.findall(worker.output))


async def test_a_tunnel_whose_calls_alternate_between_two_workers_runs_the_view_on_the_worker_holding_its_page(
    balanced: Balanced, host: Host
) -> None:
    base, w1, w2, db, _ = balanced
    async with mcp_client(base + "/mcp") as agent:  # sessionless: HAProxy sends each call to the next worker
        before = posts(w1), posts(w2)
        opened = await show(host, agent)
        view = view_in(host)
        await expect(view.get_by_test_id("warehouse-code")).to_have_text("BER", timeout=15_000)
        sku = low_stock_sku(db, "BER")
        shown = int(await on_hand(view, sku).inner_text())
        for delta in (3, -1):
            await call(agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=delta, reason="Count")
            shown += delta
            await expect(on_hand(view, sku)).to_have_text(str(shown), timeout=5000)
        await (await view_frame(host)).evaluate("location.reload()")  # opened again on the page's worker
        await expect(on_hand(view, sku)).to_have_text(str(shown), timeout=15_000)
        await call(agent, "inventory_adjust_stock", _view=opened["view"], sku=sku, delta=2, reason="After reload")
        await expect(on_hand(view, sku)).to_have_text(str(shown + 2), timeout=5000)
    assert posts(w1) - before[0] > 10 and posts(w2) - before[1] > 10  # both workers carried the tunnel's calls
    assert host.calls.reached == []


def code_of(result: mcp_types.CallToolResult) -> str:
    """The error code of a result ("" for an answer)."""
    found = re.search(r'code="([A-Z_]+)"', texts(result)[0]) if result.is_error else None
    return found.group(1) if found else ""


async def retried(client: Client, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tunnel call retried as the view's frame retries it while TUNNEL_UNAVAILABLE comes (then given up)."""
    async with asyncio.timeout(10):
        for pause in (0.25, 0.5, 1.0, 2.0, 4.0, None):
            result = await client.call_tool("webapp_tunnel_http", arguments)
            if code_of(result) != "TUNNEL_UNAVAILABLE" or pause is None:
                return structured(result)
            await asyncio.sleep(pause)
    raise AssertionError("unreachable")


async def test_a_tunnel_call_while_the_tunnels_worker_cannot_be_reached_answers_unavailable_and_works_again_after(
    balanced: Balanced, redis_server: RedisServer
) -> None:
    _, w1, w2, _, _ = balanced
    async with connect(w1) as on_one, connect(w2) as on_two:  # sessionless, as the host's calls through the balancer
        opened = await on_one.call_tool("inventory", {"warehouse_code": "BER"})
        assert opened.meta is not None
        ticket = opened.meta["webapp/view"]["ticket"]
        page = structured(await on_one.call_tool("webapp_tunnel_open", {"ticket": ticket}))
        part: dict[str, Any] = {"tunnel": page["tunnel"], "answer": page["answer"]}  # the page's parts, held by w1
        assert structured(await on_two.call_tool("webapp_tunnel_http", {**part, "part": 1}))["status"] == 200
        await asyncio.to_thread(redis_server.stop)  # w2 cannot reach w1 now
        try:
            blip = await on_two.call_tool("webapp_tunnel_http", {**part, "part": 2})
            assert code_of(blip) == "TUNNEL_UNAVAILABLE", texts(blip)
        finally:
            await asyncio.to_thread(redis_server.start)
        assert (await retried(on_two, {**part, "part": 2}))["status"] == 200  # the tunnel was there all along
        last = await retried(on_two, {**part, "part": page["parts"] - 1})
        client_id = re.search(r"client_id\W{1,16}([0-9a-f-]{36})", last["body"])
        assert client_id is not None
        query = f"client_id={client_id.group(1)}&EIO=4&transport=polling"
        handshake = await retried(on_two, {"tunnel": page["tunnel"], "method": "GET", "query": query})
        assert handshake["body"].startswith("0{")  # the page's socket passes on again
