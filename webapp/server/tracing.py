"""Traces out of `webapp serve`: with the `webapp[otel]` extra installed (the OpenTelemetry SDK and its OTLP/HTTP
exporter) and an exporter asked for in the standard `OTEL_*` variables, the SDK's tracer provider exports every span:
the MCP SDK's span per message and webapp's own below it (`webapp.core.tracing`). Without either, nothing changes.
"""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any

from webapp.calllog.masking import Masker
from webapp.core.settings import SettingsError
from webapp.server.logs import SecretLogFilter

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["console_exporter", "install_tracing", "tracing_asked"]

log = logging.getLogger(__name__)
_ASKED_BY = ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
_PROTOCOLS = {"http/protobuf": "otlp_proto_http", "grpc": "otlp_proto_grpc"}


def tracing_asked(environ: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces: an exporter or an OTLP endpoint named, and the SDK not disabled
    (without a word, the SDK's default would send every span to an OTLP collector on localhost, which most servers
    lack)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name, "").strip() for name in _ASKED_BY)


def install_tracing(
    environ: Mapping[str, str], *, worker: str | None = None, masker: Masker | None = None
) -> TracerProvider | None:
    """Make the SDK's tracer provider the global one, exporting in batches (`OTEL_BSP_*`) to each exporter of
    `OTEL_TRACES_EXPORTER` (default `otlp`: OTLP over HTTP at `OTEL_EXPORTER_OTLP_ENDPOINT`; `console`: one JSON
    object per span on stderr, masked by `masker` like a log line; `none`), sampled by `OTEL_TRACES_SAMPLER`. The
    resource is `OTEL_SERVICE_NAME` (default `webapp`) and `OTEL_RESOURCE_ATTRIBUTES`, with the worker as
    `service.instance.id`. None when traces are not asked for or the extra is not installed."""
    if not tracing_asked(environ):
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OTEL_* variables ask for traces, but the OpenTelemetry SDK is missing: pip install 'webapp[otel]'")
        return None
    masker = Masker() if masker is None else masker  # not `or`: the call log's is empty (falsy) until it fills
    exporters = [_exporter(name, environ, masker) for name in _exporter_names(environ)]
    resource = Resource.create()
    extra: dict[str, str] = {}
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        extra["service.name"] = "webapp"
    if worker and "service.instance.id=" not in environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        extra["service.instance.id"] = worker  # instead of the SDK's random one: the worker, stable across restarts
    provider = TracerProvider(resource=resource.merge(Resource(extra)))  # the sampler from OTEL_TRACES_SAMPLER
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))  # flushed at exit (the provider's atexit hook)
    trace.set_tracer_provider(provider)
    log.info("traces go to %s", ", ".join(type(exporter).__name__ for exporter in exporters) or "no exporter")
    return provider


def _exporter_names(environ: Mapping[str, str]) -> list[str]:
    names = [name.strip() for name in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if name.strip()]
    return [name for name in names if name != "none"]


def console_exporter(masker: Masker, out: IO[str] | None = None) -> SpanExporter:
    """`console`: one JSON object per span on `out` (stderr: beside the logs, as stdout may carry MCP), masked like a
    log line, as a span's name, attributes and exception text may carry what a caller sent (a tool name, an error)."""
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    mask = SecretLogFilter(masker).mask  # the registered secrets and session-id-like hex (the trace id is 0x-prefixed)

    def one_line(span: ReadableSpan) -> str:
        return mask(span.to_json(indent=None)) + "\n"

    return ConsoleSpanExporter(out=sys.stderr if out is None else out, formatter=one_line)


def _exporter(name: str, environ: Mapping[str, str], masker: Masker) -> SpanExporter:
    if name == "console":
        return console_exporter(masker)
    if name == "otlp":
        protocol = (
            environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
        ).strip() or "http/protobuf"
        if protocol not in _PROTOCOLS:
            raise SettingsError(f"OTEL_EXPORTER_OTLP_PROTOCOL must be one of {', '.join(_PROTOCOLS)}, got {protocol!r}")
        name = _PROTOCOLS[protocol]
    found = importlib.metadata.entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        hint = "pip install opentelemetry-exporter-otlp-proto-grpc" if name == "otlp_proto_grpc" else "install it"
        raise SettingsError(f"OTEL_TRACES_EXPORTER names the exporter {name!r}, which is not installed; {hint}")
    exporter_class: Any = next(iter(found)).load()
    return exporter_class()
