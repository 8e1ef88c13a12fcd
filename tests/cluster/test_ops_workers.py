"""Two workers on Postgres and Redis, seen as an operator sees them: their metrics move with calls, errors and the calls
one forwards to the other (and carry no handle, key, token or principal); their readiness stays up through a Redis
stop and start (Redis's state is in the body and a metric) and goes down, within a second per probe, while Postgres
is stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from playwright.async_api import Page, expect

from tests.support.cluster import on_worker, two_workers
from tests.support.e2e import RunningServer
from tests.support.ops import Probe, Samples, probe, promtool, scrape
from tests.support.postgres import PostgresServer
from tests.support.redis import RedisServer
from tests.support.views import COUNTER_APP, FAST, attach_key, connect, structured

PRINCIPAL, TOKEN = "opsagent", "opsagent-token-9b1e77c3"
Workers = tuple[RunningServer, RunningServer]


@pytest.fixture(scope="module")
def workers(
    postgres: PostgresServer, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workers]:
    if redis_server.process is None:
        redis_server.start()
    redis_server.flush()
    db, folder = postgres.new_database(), tmp_path_factory.mktemp("ops-workers")
    with two_workers(
        redis_server.url, *FAST, "--token", f"{PRINCIPAL}={TOKEN}", db=db, app=COUNTER_APP, cwd=folder
    ) as pair:
        yield pair


async def metrics(worker: RunningServer) -> Samples:
    return await asyncio.to_thread(scrape, worker.base_url + "/metrics")


async def ready(worker: RunningServer) -> Probe:
    return await asyncio.to_thread(probe, worker.base_url + "/readyz")


async def test_metrics_move_with_calls_errors_and_forwarded_calls_and_carry_no_handle_key_or_token(
    workers: Workers, page: Page
) -> None:
    one, two = workers
    before = [await metrics(one), await metrics(two)]
    async with connect(one, token=TOKEN) as agent:
        data: dict[str, Any] = structured(await agent.call_tool("counter", {"title": "Metered"}))
        await page.goto(on_worker(str(data["url"]), two))  # the tab on w2: w1 forwards the calls to it
        await expect(page.get_by_test_id("title")).to_have_text("Metered")
        for step in (1, 2):
            assert structured(await agent.call_tool("counter_increment", {"_view": data["view"]})) == {"count": step}
        assert (await agent.call_tool("counter_increment", {"_view": "no-such-view"})).is_error
        after = [await metrics(one), await metrics(two)]

    def grew(worker: int, name: str, **labels: str) -> float:
        return after[worker].get(name, **labels) - before[worker].get(name, **labels)

    assert grew(0, "webapp_mcp_calls_total", tool="counter_increment", outcome="ok") == 2
    assert grew(0, "webapp_mcp_calls_total", tool="counter_increment", outcome="VIEW_UNKNOWN") == 1
    assert grew(0, "webapp_mcp_call_duration_seconds_count", tool="counter_increment") == 3
    assert grew(0, "webapp_forwarded_calls_total", kind="view", outcome="answered") == 2
    assert grew(1, "webapp_forwarded_calls_served_total", kind="view") == 2
    assert after[1].get("webapp_views", state="live") >= 1 and after[1].get("webapp_tabs_attached") >= 1
    assert grew(0, "webapp_forwarded_calls_total", kind="view", outcome="VIEW_UNAVAILABLE") == 0
    assert after[0].get("webapp_redis_up") == after[1].get("webapp_redis_up") == 1
    # one or two workers read this worker's frames so far: 1² or 2² over the default budget
    assert after[0].get("webapp_app_event_window_seconds") in (1 / 15_000, 4 / 15_000)
    secrets = (data["view"], attach_key(str(data["url"])), TOKEN, PRINCIPAL)
    for scraped in after:
        assert not [secret for secret in secrets if secret in scraped.text]
        checked = promtool("check", "metrics", stdin=scraped.text)  # the cluster's families too
        assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_readiness_stays_up_through_a_redis_stop_and_start_and_reports_where_redis_is(
    workers: Workers, redis_server: RedisServer
) -> None:
    one, _ = workers
    assert (await ready(one)).body["redis"] == "up"
    redis_server.stop()
    try:
        seen: list[Probe] = []

        async def redis_down() -> bool:
            seen.append(await ready(one))
            return seen[-1].body["redis"] == "down"

        await _until(redis_down, "the probe to report Redis down")
        assert {answer.status for answer in seen} == {200}  # Redis never takes a worker out of the balancer
        assert (await metrics(one)).get("webapp_redis_up") == 0
    finally:
        redis_server.start()

    async def redis_up() -> bool:
        answer = await ready(one)
        return answer.status == 200 and answer.body["redis"] == "up"

    await _until(redis_up, "the probe to report Redis up again")
    assert (await metrics(one)).get("webapp_redis_up") == 1


async def test_readiness_goes_down_within_a_second_per_probe_while_postgres_is_stopped(
    workers: Workers, postgres: PostgresServer
) -> None:
    one, two = workers
    assert (await ready(one)).status == 200
    seen: list[Probe] = []
    with postgres.stopped():

        async def not_ready() -> bool:
            seen.append(await ready(one))
            return seen[-1].status == 503

        await _until(not_ready, "the probe to answer 503")
        seen += [await ready(one), await ready(two)]
        live = await asyncio.to_thread(probe, two.base_url + "/healthz")
        assert seen[-1].body == {
            "status": "not ready",
            "reason": "the database does not answer",
            "database": "down",
            "draining": False,
            "redis": "up",
        }
        assert live.status == 200 and (await metrics(one)).get("webapp_database_up") == 0
    assert max(answer.seconds for answer in [*seen, live]) < 1.0, [answer.seconds for answer in seen]
    print(f"probes with Postgres stopped: {len(seen)} answered in {max(a.seconds for a in seen) * 1000:.0f} ms at most")

    async def back() -> bool:
        return (await ready(one)).status == 200

    await _until(back, "the probe to answer 200 again")


async def _until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 10.0) -> None:
    """Probe again every 100 ms until `check()` holds; fails after `timeout` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no {what} within {timeout} s")
        await asyncio.sleep(0.1)
