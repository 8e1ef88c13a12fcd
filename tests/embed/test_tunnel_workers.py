"""A tunnelled view with two workers behind HAProxy: the host's sessionless calls alternate between the workers, so
every other tunnel call lands on the worker that does not hold the view's page and reaches the one that does through
its inbox (the shared directory says which)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from playwright.async_api import Browser, expect

from tests.support.claude_host import ClaudeHost, serve_claude_host
from tests.support.e2e import RunningServer, mcp_client, run_server
from tests.support.embed import low_stock_sku
from tests.support.haproxy import free_port, run_haproxy
from tests.support.redis import RedisServer
from tests.support.tunnel_host import Host, on_hand, open_host, show, view_frame, view_in
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
