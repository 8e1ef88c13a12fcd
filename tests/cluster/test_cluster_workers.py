"""Two workers on a 3-master Redis Cluster (`--redis-url redis+cluster://…`): an agent on one drives a view whose tab
is on the other, every call answered (no false "owner gone" while the owner lives); app events (the call records)
reach the other worker's viewer; a killed owner's view answers VIEW_UNAVAILABLE at once."""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.cluster.conftest import Engines
from tests.support.cluster import on_worker, start_worker, two_workers
from tests.support.e2e import RunningServer
from tests.support.views import COUNTER_APP, FAST, connect, structured, texts

SETTINGS = (*FAST, "--call-timeout", "20")
WAIT = 10_000  # ms: the bound of every wait for the browser


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("on-cluster") / "shared.db"


@pytest.fixture(scope="module")
def workers(shared_db: Path, engines: Engines) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Workers w1 (the agent's) and w2 (the tab's), their inboxes on different masters of the Cluster."""
    engines.cluster.flush()
    with two_workers(engines.cluster.url, *SETTINGS, db=shared_db, app=COUNTER_APP) as pair:
        yield pair


async def open_on(agent: Any, page: Page, worker: RunningServer, title: str) -> dict[str, Any]:
    data = structured(await agent.call_tool("counter", {"title": title}))
    await page.goto(on_worker(str(data["url"]), worker))
    await expect(page.get_by_test_id("title")).to_have_text(title)
    return data


async def test_an_agent_on_one_worker_drives_a_view_on_the_other_through_the_cluster_every_call_answered(
    workers: tuple[RunningServer, RunningServer], page: Page
) -> None:
    one, two = workers
    async with connect(one) as agent:
        data = await open_on(agent, page, two, "Across")
        for step in range(1, 31):
            bumped = await agent.call_tool("counter_increment", {"_view": data["view"]})
            assert structured(bumped) == {"count": step}, texts(bumped)
        await expect(page.get_by_test_id("count")).to_have_text("30")
        reported: list[tuple[float, float | None, str | None]] = []

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            reported.append((progress, total, message))

        counted = await agent.call_tool("counter_count_to", {"n": 2, "_view": data["view"]}, progress_callback=progress)
        assert texts(counted) == ["counted to 2"] and reported == [(1, 2, "counted 1"), (2, 2, "counted 2")]
    for worker in workers:
        assert "Traceback" not in worker.output and "is gone" not in worker.output


async def test_the_call_records_of_one_worker_reach_the_other_workers_viewer(
    workers: tuple[RunningServer, RunningServer], page: Page
) -> None:
    one, two = workers
    await page.goto(f"{two.base_url}/viewer")
    rows = page.locator(".wv-call")
    await expect(rows.first).to_be_visible(timeout=WAIT)
    before = await rows.count()
    async with connect(one) as agent:
        await agent.call_tool("ping", {})  # made on w1 while w2's viewer is open: it arrives as an app event
    await expect(rows).to_have_count(before + 1, timeout=WAIT)
    await expect(rows.first.locator(".wv-call-tool")).to_have_text("ping")
    await expect(rows.first.locator(".wv-call-worker")).to_have_text("worker w1")


async def test_a_call_to_a_killed_owners_view_answers_view_unavailable_at_once(
    workers: tuple[RunningServer, RunningServer], page: Page, engines: Engines, shared_db: Path
) -> None:
    one, _ = workers
    async with connect(one) as agent:
        with contextlib.ExitStack() as stack:
            three = await start_worker(stack, "w3", engines.cluster.url, *SETTINGS, db=shared_db, app=COUNTER_APP)
            data = await open_on(agent, page, three, "Doomed")
            assert structured(await agent.call_tool("counter_increment", {"_view": data["view"]})) == {"count": 1}
            three.process.send_signal(signal.SIGKILL)
            three.process.wait(10)
            started = time.monotonic()
            failed = await agent.call_tool("counter_increment", {"_view": data["view"]})
            took = time.monotonic() - started
        assert failed.is_error and 'code="VIEW_UNAVAILABLE"' in texts(failed)[0], texts(failed)
        assert took < 1.0, took  # the SPUBLISH count of the inbox's slot node: no wait for the heartbeat's TTL
