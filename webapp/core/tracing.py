"""Spans of webapp's own steps (routing a call, the round trip to a view's tab, a call forwarded to another worker)
and the W3C trace context a forwarded call carries, on OpenTelemetry's API alone: every span is a no-op until the
server installs the SDK (`webapp[otel]`, `webapp.server.tracing`). The MCP SDK's span per message is their parent.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, StatusCode

__all__ = ["SpanKind", "current_trace_id", "span", "trace_carrier"]

_tracer = trace.get_tracer("webapp")
_CARRIED = ("traceparent", "tracestate")  # what a forwarded call carries (W3C trace context; no baggage)


@contextlib.contextmanager
def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    attributes: Mapping[str, str | int | float | bool] | None = None,
    carrier: Mapping[str, Any] | None = None,
) -> Generator[Span]:
    """A span around the block, a child of the current one, or with `carrier` of the span that sent it (another
    worker's). An exception leaving the block marks it failed with `error.type`: its `code` (a `ViewError`'s) or its
    class name."""
    parent = _extracted(carrier) if carrier is not None else None
    with _tracer.start_as_current_span(
        name,
        context=parent,
        kind=kind,
        attributes=dict(attributes or {}),
        record_exception=False,  # an exception's text may carry secrets; its type says enough
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except Exception as error:
            if current.is_recording():
                code = getattr(error, "code", None)
                current.set_attribute("error.type", code if isinstance(code, str) else type(error).__qualname__)
                current.set_status(StatusCode.ERROR)
            raise


def trace_carrier() -> dict[str, str]:
    """The current span's W3C trace context (`traceparent`, `tracestate`) for a request to another worker; empty
    when nothing is traced."""
    carrier: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        propagate.inject(carrier)
    return {key: value for key, value in carrier.items() if key in _CARRIED}


def current_trace_id() -> str | None:
    """The current trace's id (32 hex digits), for a log line; None when nothing is traced (or sampled)."""
    context = trace.get_current_span().get_span_context()
    return trace.format_trace_id(context.trace_id) if context.is_valid and context.trace_flags.sampled else None


def _extracted(carrier: Mapping[str, Any]) -> Any:
    """The remote parent named by `carrier`, or None (then the span is a child of the current one)."""
    fields = {key: value for key in _CARRIED if isinstance(value := carrier.get(key), str)}
    if not fields:
        return None
    context = propagate.extract(fields)
    return context if trace.get_current_span(context).get_span_context().is_valid else None
