"""Spans recorded in the test process: `recording()` gives the OpenTelemetry SDK's in-memory exporter for the block.

OpenTelemetry's global tracer provider can be set once per process, and every tracer made before (the MCP SDK's,
webapp's) follows it from then on. So a switch is set once: inside `recording()` it hands out an SDK tracer whose
spans the exporter keeps; outside, the API's no-op tracer, as if the SDK were not installed (nothing recorded, no
`traceparent` sent by the clients of the other tests).
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Sequence

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Span, SpanKind
from opentelemetry.util.types import Attributes

__all__ = ["by_name", "children", "recording"]


class _Switch(trace.TracerProvider):
    def __init__(self) -> None:
        self.current: trace.TracerProvider = trace.NoOpTracerProvider()

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes = None,
    ) -> trace.Tracer:
        return _SwitchedTracer(self, instrumenting_module_name)


class _SwitchedTracer(trace.Tracer):
    def __init__(self, switch: _Switch, name: str) -> None:
        self._switch = switch
        self._name = name

    def start_span(
        self,
        name: str,
        context: otel_context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> Span:
        tracer = self._switch.current.get_tracer(self._name)
        return tracer.start_span(
            name, context, kind, attributes, links, start_time, record_exception, set_status_on_exception
        )

    @contextlib.contextmanager
    def start_as_current_span(  # pyright: ignore[reportIncompatibleMethodOverride]
        self,
        name: str,
        context: otel_context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Generator[Span]:
        tracer = self._switch.current.get_tracer(self._name)
        with tracer.start_as_current_span(
            name, context, kind, attributes, links, start_time, record_exception, set_status_on_exception, end_on_exit
        ) as span:
            yield span


_SWITCH = _Switch()
trace.set_tracer_provider(_SWITCH)


@contextlib.contextmanager
def recording() -> Generator[InMemorySpanExporter]:
    """Every span started in the block, kept by the returned exporter (as the SDK exports them)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _SWITCH.current = provider
    try:
        yield exporter
    finally:
        _SWITCH.current = trace.NoOpTracerProvider()
        provider.shutdown()


def by_name(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    """The one span called `name`."""
    found = [span for span in spans if span.name == name]
    assert len(found) == 1, (name, [span.name for span in spans])
    return found[0]


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[str]:
    """The names of `parent`'s children, by start."""
    parent_id = parent.context.span_id if parent.context is not None else None
    kids = [span for span in spans if span.parent is not None and span.parent.span_id == parent_id]
    return [span.name for span in sorted(kids, key=lambda span: span.start_time or 0)]
