"""One trace across two workers: a call routed on one worker to a view the other holds is a child of the MCP SDK's
span per message, and the request it sends through Redis carries `traceparent`, so the owner's spans join the same
trace. In process first (two servers and their nodes on one database and a real Redis, the SDK's in-memory
exporter), then end to end: two `webapp serve` workers exporting to stderr, a tab on the second.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from mcp import Client
from opentelemetry import trace

from tests.support.cluster import on_worker
from tests.support.e2e import STATE_KEY, RunningServer, run_server
from tests.support.light_tab import LightTab
from tests.support.test_app import CounterView
from tests.support.traces import by_name, children, recording
from tests.support.views import COUNTER_APP, attach_key, connect, structured, texts
from webapp.apps.naming import collect_app
from webapp.bridge import Bridge, BridgeSettings, ViewState
from webapp.bridge.app_tools import app_tools
from webapp.bridge.store import ViewStore
from webapp.cluster import inbox_channel, install_cluster
from webapp.core.settings import Settings
from webapp.server.composition import WebApp

TRACED = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "20", "OTEL_SERVICE_NAME": "webapp-test"}
TOKEN = "agent-6d1f0c9e2b7a4e58"


def worker(tmp_path: Path, redis_url: str, name: str) -> tuple[WebApp, Bridge]:
    """A server of the counter app that is worker `name` (no NiceGUI running: its views never get a tab here)."""
    settings = Settings(
        db=tmp_path / "views.db",
        port=0,
        redis_url=redis_url,
        request_state_key=STATE_KEY,
        worker_id=name,
        wait_for_live=0.2,
    )
    webapp = WebApp(settings)
    bridge = Bridge(BridgeSettings.from_settings(settings), ViewStore(settings.db), on_secret=webapp.calllog.add_secret)
    bridge.apps["counter"] = app = collect_app(CounterView)
    for tool in app_tools(app, bridge):
        webapp.add_tool(tool)
    webapp.bridges.append(bridge)
    webapp.on_startup(bridge.start)
    webapp.on_shutdown(bridge.stop)
    install_cluster(webapp)
    return webapp, bridge


@pytest_asyncio.fixture
async def workers(tmp_path: Path, redis_db: str) -> AsyncIterator[tuple[WebApp, Bridge, str]]:
    """Worker w1 (the agent's) and worker w2, which holds a live counter view (its handle) as if its tab were there."""
    one, _ = worker(tmp_path, redis_db, "w1")
    two, held = worker(tmp_path, redis_db, "w2")
    for webapp in (one, two):
        await webapp.started()
    view = await held.registry.create("counter", principal=None, session_id=None, bound=True, arguments={})
    view.set_state(ViewState.LIVE, 0)
    await held.registry.claim(view)  # as a tab attaching on w2 does
    await held.transport.attached(view)  # its lease
    try:
        yield one, held, view.handle
    finally:
        for webapp in (one, two):
            await webapp.stopping()


@contextlib.asynccontextmanager
async def inbox_of(redis_url: str, name: str) -> AsyncGenerator[asyncio.Queue[dict[str, Any]]]:
    """The requests sent to worker `name`'s inbox from now on."""
    seen: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    client = aioredis.Redis.from_url(redis_url)
    pubsub = client.pubsub(ignore_subscribe_messages=True)

    def received(message: dict[str, Any]) -> None:
        seen.put_nowait(orjson.loads(message["data"]))

    await pubsub.ssubscribe(**{inbox_channel(name): received})
    reader = asyncio.create_task(pubsub.run())
    try:
        yield seen
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await pubsub.aclose()
        await client.aclose()


async def next_call(inbox: asyncio.Queue[dict[str, Any]]) -> dict[str, Any]:
    async with asyncio.timeout(5):
        while (message := await inbox.get())["kind"] != "call":
            pass
    return message["body"]


async def test_a_forwarded_call_is_one_trace_from_the_agents_span_to_the_owners_routing(
    workers: tuple[WebApp, Bridge, str], redis_db: str
) -> None:
    one, _, handle = workers
    async with inbox_of(redis_db, "w2") as inbox, Client(one.mcp) as agent:
        with recording() as exporter:
            answered = await agent.call_tool("counter_increment", {"_view": handle})
            body = await next_call(inbox)
        spans = exporter.get_finished_spans()
        untraced = await agent.call_tool("counter_increment", {"_view": handle})
        plain = await next_call(inbox)
    # the owner answered (its view has no tab in this process: it says so), through w1
    assert answered.is_error and texts(answered)[0].startswith('<tool_error code="VIEW_CLOSED"'), texts(answered)
    sdk = by_name(spans, "tools/call counter_increment")
    forward = by_name(spans, "webapp forward counter_increment")
    served = by_name(spans, "webapp forwarded counter_increment")
    assert children(spans, sdk) == ["webapp route counter", "webapp forward counter_increment"]
    assert children(spans, forward) == ["webapp forwarded counter_increment"]  # across Redis
    assert children(spans, served) == ["webapp route counter"]  # the owner routes it again, to its own record
    assert len({span.context.trace_id for span in spans if span.context is not None}) == 1
    assert forward.attributes is not None and forward.attributes["webapp.owner"] == "w2"
    assert served.attributes is not None and served.attributes["webapp.worker"] == "w2"
    assert forward.context is not None
    ids = (trace.format_trace_id(forward.context.trace_id), trace.format_span_id(forward.context.span_id))
    assert body["traceparent"] == f"00-{ids[0]}-{ids[1]}-{forward.context.trace_flags:02x}"
    for span in spans:  # a view shows as its masked prefix, never its handle
        assert handle not in json.dumps(dict(span.attributes or {})), span.name
    # untraced (the SDK absent, or no exporter asked for), the request carries nothing more
    assert untraced.is_error and "traceparent" not in plain and set(plain) >= {"target", "tool", "caller"}


# -- end to end: two `webapp serve` workers exporting their spans to stderr -------------------------------------------


@pytest.fixture
def traced_workers(tmp_path: Path, redis_db: str) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Workers w1 and w2 of the counter app with traces exported as JSON lines on stderr (`console`)."""
    args = ("--redis-url", redis_db, "--wait-for-live", "5", "--token", f"agent={TOKEN}")
    with (
        run_server(*args, "--worker-id", "w1", app=COUNTER_APP, db=tmp_path / "shared.db", env=TRACED) as one,
        run_server(*args, "--worker-id", "w2", app=COUNTER_APP, db=tmp_path / "shared.db", env=TRACED) as two,
    ):
        yield one, two


def spans_of(server: RunningServer, trace_id: str) -> list[dict[str, Any]]:
    """The spans of `trace_id` the server exported so far (one JSON object per line on stderr)."""
    spans = [json.loads(line) for line in server.output.splitlines() if line.startswith('{"name"')]
    return [span for span in spans if span["context"]["trace_id"] == f"0x{trace_id}"]


async def test_a_call_forwarded_between_two_served_workers_is_one_trace_on_both(
    traced_workers: tuple[RunningServer, RunningServer],
) -> None:
    one, two = traced_workers
    async with connect(one, token=TOKEN) as agent:
        opened = structured(await agent.call_tool("counter", {"title": "Traced"}))
        tab = LightTab(on_worker(str(opened["url"]), two))  # its tab on w2, as a balancer may send it
        await tab.open()
        try:
            with recording() as exporter:  # the agent's own span: its trace id travels in `_meta`
                bumped = await agent.call_tool("counter_increment", {"_view": opened["view"]})
            [sent] = [span for span in exporter.get_finished_spans() if span.name.startswith("MCP send")]
        finally:
            await tab.close()
    assert structured(bumped) == {"count": 1}
    assert sent.context is not None
    trace_id = trace.format_trace_id(sent.context.trace_id)
    for server, last in ((one, "tools/call"), (two, "webapp forwarded")):  # each worker's outermost span ends last
        server.wait_for_output(f'^{{"name": "{last} counter_increment".*"trace_id": "0x{trace_id}"', timeout=10)
    here, there = spans_of(one, trace_id), spans_of(two, trace_id)
    assert {"tools/call counter_increment", "webapp route counter", "webapp forward counter_increment"} <= {
        span["name"] for span in here
    }
    assert {"webapp forwarded counter_increment", "webapp route counter", "webapp tab counter"} <= {
        span["name"] for span in there
    }
    # (a forward may be tried again when the tab's lease was not yet written: each try is a span of its own)
    forwards = {span["context"]["span_id"] for span in here if span["name"] == "webapp forward counter_increment"}
    served = [span for span in there if span["name"] == "webapp forwarded counter_increment"]
    assert served and all(span["parent_id"] in forwards for span in served)  # w2's spans continue w1's, through Redis
    for span in here + there:  # the workers are told apart; no span names a handle, key or token
        assert span["resource"]["attributes"]["service.name"] == "webapp-test"
        assert span["resource"]["attributes"]["service.instance.id"] in ("w1", "w2")
        for secret in (opened["view"], attach_key(str(opened["url"])), TOKEN):
            assert secret not in json.dumps(span), span["name"]
