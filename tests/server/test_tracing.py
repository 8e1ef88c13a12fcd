"""When `webapp serve` sets up traces: only when an `OTEL_*` variable asks for them, and never with an exporter it
cannot make (the server then refuses to start, saying what to install). `tests/cluster/test_traces.py` follows the
spans themselves."""

from __future__ import annotations

import pytest

from webapp.core.settings import SettingsError
from webapp.server.tracing import install_tracing, tracing_asked


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
