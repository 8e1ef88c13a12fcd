"""When `webapp serve` sets up traces: only when an `OTEL_*` variable asks for them, and never with an exporter it
cannot make (the server then refuses to start, saying what to install); the console exporter's text masked like a log
line. `tests/cluster/test_traces.py` follows the spans themselves."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.support.e2e import run_server
from tests.support.views import COUNTER_APP, connect, structured
from webapp.calllog import Masker
from webapp.core.settings import SettingsError
from webapp.server.tracing import console_exporter, install_tracing, tracing_asked

SECRET = "view-7d3a9c1e5b2f8064"
SESSION = "c0ffee00c0ffee00c0ffee00c0ffee00"  # as the SDK's session ids look (uuid4 hex)


@pytest.mark.parametrize(
    ("environ", "asked"),
    [
        ({}, False),  # the SDK's default (OTLP to localhost) is no request: most servers have no collector there
        ({"OTEL_SERVICE_NAME": "shop"}, False),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "TRUE"}, False),
    ],
)
def test_traces_are_set_up_only_when_a_variable_asks_for_them(environ: dict[str, str], asked: bool) -> None:
    assert tracing_asked(environ) is asked
    if not asked:
        assert install_tracing(environ) is None


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "'zipkin', which is not installed"),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            "pip install opentelemetry-exporter-otlp-proto-grpc",
        ),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "'http/json'"),
    ],
)
def test_an_exporter_that_cannot_be_made_stops_the_start_with_what_to_do(environ: dict[str, str], says: str) -> None:
    with pytest.raises(SettingsError, match=says):
        install_tracing(environ)


def test_the_console_exporter_masks_a_registered_secret_in_a_spans_name_attributes_and_events() -> None:
    masker, out = Masker(), io.StringIO()
    masker.add(SECRET)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(console_exporter(masker, out)))
    with provider.get_tracer("tests").start_as_current_span(f"open {SECRET}", attributes={"view": SECRET}) as span:
        span.set_attribute("session", SESSION)
        span.add_event("failed", {"error": f"cannot use {SECRET}"})
        context = span.get_span_context()
    provider.shutdown()
    [shown] = [json.loads(line) for line in out.getvalue().splitlines()]
    assert shown["name"] == "open view-7…"
    assert shown["attributes"] == {"view": "view-7…", "session": "c0ffee…"}
    assert shown["events"][0]["attributes"] == {"error": "cannot use view-7…"}
    assert shown["context"]["trace_id"] == f"0x{trace.format_trace_id(context.trace_id)}"  # no session id: kept
    assert SECRET not in out.getvalue() and SESSION not in out.getvalue()


async def test_a_served_worker_exporting_to_the_console_masks_a_view_handle_an_agent_sent_as_a_tool_name(
    tmp_path: Path,
) -> None:
    traced = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "20"}
    with run_server(app=COUNTER_APP, db=tmp_path / "traced.db", env=traced) as running:  # no token: no secret at start
        async with connect(running) as agent:
            handle = str(structured(await agent.call_tool("counter", {"title": "Traced"}))["view"])
            assert (await agent.call_tool(handle, {})).is_error  # the SDK names its span after the tool asked for
        masked = f"tools/call {handle[:6]}…"
        span = running.wait_for_output(f'^{{"name": "{re.escape(masked)}".*$', timeout=10).group(0)
    assert json.loads(span)["attributes"]["gen_ai.tool.name"] == f"{handle[:6]}…"
    assert handle not in running.output
