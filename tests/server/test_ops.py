"""The operator's routes (apps.md §16): `/healthz` and `/readyz` answer whatever the Host and without a token, the
database check answers in time when the database hangs, `/metrics` counts calls by bounded labels, shows how late the
event loop runs and passes `promtool check metrics`, `--metrics-port` serves them on a port of their own (the serving
port's `/metrics` only to allowed Hosts, the metrics port's to any), and a draining worker is not ready;
the alert rules pass `promtool check rules` and fire on their synthetic series (`promtool test rules`)."""

from __future__ import annotations

import asyncio
import signal
import socket
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from tests.support.apps import add_tools
from tests.support.e2e import REPO, RunningServer, mcp_client, mcp_client_with_token, run_server
from tests.support.ops import probe, promtool, scrape
from tests.support.test_app import build as build_counter_app
from webapp.core.context import Caller
from webapp.core.settings import Settings
from webapp.server.composition import WebApp
from webapp.server.ops import METRICS_PATH, PROBE_PATHS, OpsRoutes
from webapp.server.readiness import WAIT, DatabaseCheck

TOKEN = "ops-token-5f0c2a9e71d4"
ALERTS = REPO / "deploy" / "prometheus"
_METRICS_PORT = r"metrics (http://\S+)/metrics  \(and /healthz"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, str]]:
    """A server that needs a token for /mcp, with its metrics port too: the server and the metrics port's URL."""
    db = tmp_path_factory.mktemp("ops") / "ops.db"
    with run_server("--token", f"ops={TOKEN}", "--metrics-port", "0", db=db) as running:
        yield running, running.wait_for_output(_METRICS_PORT).group(1)


def test_the_probes_answer_any_host_and_no_host_without_a_token_while_pages_refuse_a_foreign_host(
    server: tuple[RunningServer, str],
) -> None:
    running, _ = server
    for host in ("10.1.2.3:8080", "webapp-0.webapp.default.svc", "evil.example"):
        assert (probe(running.base_url + "/healthz", Host=host).status, host) == (200, host)
        ready = probe(running.base_url + "/readyz", Host=host)
        assert (ready.status, ready.body) == (
            200,
            {"status": "ready", "database": "up", "draining": False, "redis": "off"},
        )
    with closing(socket.create_connection(("127.0.0.1", running.port))) as raw:  # HTTP/1.0 without any Host
        raw.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
        assert raw.recv(4096).startswith(b"HTTP/1.1 200 ")
    assert httpx.get(running.base_url + "/", headers={"Host": "evil.example"}).status_code == 421
    assert httpx.post(running.mcp_url, json={}, headers={"Host": "evil.example"}).status_code == 421
    assert httpx.post(running.mcp_url, json={}).status_code == 401  # /mcp still needs its token


async def test_metrics_count_calls_by_tool_and_outcome_with_unknown_tools_as_unknown_and_no_secret_in_them(
    server: tuple[RunningServer, str],
) -> None:
    running, port_url = server
    metrics = port_url + "/metrics"  # as a scraper that uses the pod's address does
    before = await asyncio.to_thread(scrape, metrics)
    async with mcp_client_with_token(running, TOKEN) as client:
        await client.list_tools()
        for text in ("one", "two", TOKEN):
            assert not (await client.call_tool("echo", {"text": text})).is_error
        assert (await client.call_tool("boom", {})).is_error
        assert (await client.call_tool("no_such_tool_c0ffee51", {})).is_error
    after = await asyncio.to_thread(scrape, metrics, Host="10.0.0.9:9090")

    def grew(name: str, **labels: str) -> float:
        return after.get(name, **labels) - before.get(name, **labels)

    assert grew("webapp_mcp_calls_total", tool="echo", outcome="ok") == 3
    assert grew("webapp_mcp_calls_total", tool="boom", outcome="INTERNAL_ERROR") == 1
    ((unknown,),) = {(k[1],) for k in after.values if k[0] == "webapp_mcp_calls_total" and ("tool", "unknown") in k[1]}
    assert dict(unknown)["outcome"].isupper()  # the registry's code for a tool it does not know
    assert grew("webapp_mcp_call_duration_seconds_count", tool="echo") == 3
    assert after.get("webapp_database_up") == after.get("webapp_ready") == 1
    assert after.get("webapp_draining") == 0 and not after.has("webapp_redis_up")  # no Redis configured
    assert after.has("webapp_loop_lag_seconds") and 0 <= after.get("webapp_loop_lag_seconds") < 1
    assert TOKEN not in after.text and "c0ffee51" not in after.text and "ops" not in after.label_values()


def test_the_metrics_port_serves_the_same_routes_alone_and_a_live_scrape_passes_promtool(
    server: tuple[RunningServer, str],
) -> None:
    running, port_url = server
    scraped = scrape(port_url + "/metrics", Host="anything")
    assert scraped.has("webapp_views") and scraped.has("webapp_mcp_calls_total")
    assert probe(port_url + "/readyz").status == probe(port_url + "/healthz").status == 200
    assert httpx.get(port_url + "/viewer").status_code == 404
    assert httpx.head(port_url + "/metrics").content == b""
    checked = promtool("check", "metrics", stdin=httpx.get(running.base_url + "/metrics").text)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_serving_ports_metrics_refuse_a_foreign_host_which_the_metrics_port_answers(
    server: tuple[RunningServer, str],
) -> None:
    running, port_url = server
    foreign = "10.0.0.9:9090"  # the pod's address, as a scraper sends it
    assert httpx.get(running.base_url + "/metrics", headers={"Host": foreign}).status_code == 421
    assert httpx.get(running.base_url + "/metrics").status_code == 200  # an allowed Host (loopback)
    on_port = httpx.get(port_url + "/metrics", headers={"Host": foreign})
    assert on_port.status_code == 200 and "webapp_mcp_calls_total" in on_port.text


async def test_metrics_stay_off_a_non_loopback_serving_port_unless_asked_for(tmp_path: Path) -> None:
    async def get(settings: Settings, path: str) -> int:
        webapp = WebApp(settings)
        app = OpsRoutes(Starlette(), source=lambda: webapp, paths=PROBE_PATHS | {METRICS_PATH})
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://pod") as client:
            return (await client.get(path)).status_code

    remote = Settings(host="10.0.0.5", allow_remote=True, db=":memory:")
    assert await get(remote, "/metrics") == 404  # passed on to the app, which has no such page
    assert await get(remote, "/healthz") == 200
    assert await get(remote.model_copy(update={"metrics": True}), "/metrics") == 200
    assert await get(Settings(db=":memory:"), "/metrics") == 200  # loopback


async def test_a_draining_server_is_not_ready_and_says_why(tmp_path: Path) -> None:
    db = tmp_path / "drain.db"
    sqlite3.connect(db).close()
    webapp = WebApp(Settings(db=db))
    add_tools(webapp)
    assert (await webapp.readiness.report()).ready
    webapp.drain.begin()
    report = await webapp.readiness.report()
    assert not report.ready and report.body() == {
        "status": "not ready",
        "reason": "draining: the worker is stopping and takes no new calls",
        "database": "up",
        "draining": True,
        "redis": "off",
    }
    refused = await webapp.call_tool("echo", {"text": "late"}, Caller(principal=None, session_id=None, protocol="x"))
    assert refused.is_error
    assert webapp.readiness.changes == 1
    assert b'webapp_mcp_calls_total{outcome="SERVER_STOPPING",tool="echo"} 1.0' in webapp.metrics.exposition()
    webapp.readiness.database.close()


async def test_a_tunnels_plumbing_calls_are_counted_apart_from_the_agents_calls() -> None:
    webapp = WebApp(Settings(db=":memory:"))
    build_counter_app(webapp)
    caller = Caller(principal=None, session_id=None, protocol="2026-07-28")
    assert (await webapp.call_tool("webapp_tunnel_close", {"tunnel": "t" * 24}, caller)).is_error
    text = webapp.metrics.exposition().decode()
    assert 'webapp_tunnel_calls_total{outcome="TUNNEL_UNKNOWN",tool="webapp_tunnel_close"} 1.0' in text
    assert "webapp_mcp_calls_total{" not in text and "webapp_tunnels_open 0.0" in text


async def test_the_loop_lag_gauge_shows_how_late_a_blocked_loop_ran_its_timer() -> None:
    webapp = WebApp(Settings(db=":memory:"))
    lag = webapp.loop_lag
    await webapp.started()
    try:
        await asyncio.sleep(0)  # the watching task starts its first look
        time.sleep(0.5)  # the loop blocked, as a database call on it would
        async with asyncio.timeout(5):
            while lag.seconds < 0.3:
                await asyncio.sleep(lag.interval)  # the watching task notes the lateness when it wakes
        text = webapp.metrics.exposition().decode()
    finally:
        await webapp.stopping()
    (line,) = [line for line in text.splitlines() if line.startswith("webapp_loop_lag_seconds ")]
    assert 0.3 <= float(line.split()[1]) < 2


async def test_a_database_that_accepts_but_never_answers_is_down_within_the_probe_wait() -> None:
    with closing(socket.create_server(("127.0.0.1", 0))) as black_hole:  # the kernel accepts; nobody ever answers
        port = black_hole.getsockname()[1]
        check = DatabaseCheck(f"postgresql://app@127.0.0.1:{port}/app")
        started = time.perf_counter()
        assert await check.up() is False
        assert time.perf_counter() - started < WAIT + 0.3
        started = time.perf_counter()
        assert await check.up() is False  # the check still under way: the next probe does not pile up another
        assert time.perf_counter() - started < WAIT + 0.3
        check.close()


async def test_a_stopping_server_answers_not_ready_on_its_metrics_port_until_its_calls_end(tmp_path: Path) -> None:
    with run_server("--metrics-port", "0", "--drain-timeout", "2", db=tmp_path / "stop.db") as running:
        port_url = running.wait_for_output(_METRICS_PORT).group(1)
        async with mcp_client(running) as client:
            await client.list_tools()
            call = asyncio.ensure_future(client.call_tool("hold", {"past_stop": True}))
            await asyncio.to_thread(running.wait_for_output, "holding a call until the server stops")
            running.process.send_signal(signal.SIGTERM)
            await asyncio.to_thread(running.wait_for_output, "call\\(s\\) in flight get 2 seconds to end")
            ready = await asyncio.to_thread(probe, port_url + "/readyz")
            assert (ready.status, ready.body["reason"]) == (
                503,
                "draining: the worker is stopping and takes no new calls",
            )
            drained = await asyncio.to_thread(scrape, port_url + "/metrics")
            assert (drained.get("webapp_draining"), drained.get("webapp_ready")) == (1, 0)
            assert drained.get("webapp_calls_in_flight") == 1
            try:  # the serving port stopped listening at the signal: a balancer's check fails there too
                status = (await asyncio.to_thread(probe, running.base_url + "/readyz")).status
            except httpx.ConnectError:
                status = None
            assert status in (None, 503)
            assert (await asyncio.wait_for(call, 20)).is_error
        assert await asyncio.to_thread(running.process.wait, 20) in (0, -signal.SIGTERM, 128 + signal.SIGTERM)


def test_the_alert_rules_are_valid_and_each_fires_on_its_synthetic_series() -> None:
    checked = promtool("check", "rules", str(ALERTS / "alerts.yml"))
    assert checked.returncode == 0 and "SUCCESS: 5 rules found" in checked.stdout, checked.stdout + checked.stderr
    tested = promtool("test", "rules", str(ALERTS / "alerts.test.yml"))
    assert tested.returncode == 0 and "SUCCESS" in tested.stdout, tested.stdout + tested.stderr
    rules = (ALERTS / "alerts.yml").read_text()
    fired = (ALERTS / "alerts.test.yml").read_text()
    for alert in ("WebappCallErrorRate", "WebappForwardedCallFailures", "WebappRedisDown", "WebappReadinessFlapping"):
        assert f"alert: {alert}" in rules and f"alertname: {alert}" in fired
