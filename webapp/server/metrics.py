"""Prometheus metrics of one server (apps.md §16), from `prometheus_client` in a registry of the server's own.

Calls are counted as they finish; everything else is read from the server's parts when scraped. Labels are bounded:
a tool the server does not know is `unknown`, an outcome is `webapp.calllog.outcome_code`'s word (at most 64 distinct
ones); no label or value carries a handle, key, token or principal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, TypeVar

import mcp_types
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client import Counter as CounterFamily
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.registry import Collector

from webapp.bridge import Bridge, ViewState
from webapp.calllog import outcome_code
from webapp.cluster import Node, RedisTransport
from webapp.embed import TunnelService
from webapp.events import AppEvents
from webapp.server.drain import Drain
from webapp.server.lag import LoopLag
from webapp.server.readiness import Readiness

__all__ = ["CONTENT_TYPE", "UNKNOWN_TOOL", "Metrics", "MetricsSource"]

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4
UNKNOWN_TOOL = "unknown"
_MOST_CODES = 64  # distinct outcomes counted by name (`webapp.calllog.outcome_code`); more count as OTHER
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_BOOTS = ("ok", "used", "expired", "unknown", "gone", "failed")
_FORWARDED = {
    "view": ("answered", "asked", "moved", "VIEW_UNAVAILABLE", "BRIDGE_UNAVAILABLE", "VIEW_TIMEOUT", "INTERNAL_ERROR"),
    "tunnel": ("answered", "unreachable"),
}
_SERVED = ("view", "tunnel", "moved", "refused")
_Family = TypeVar("_Family", CounterMetricFamily, GaugeMetricFamily)


class MetricsSource(Protocol):
    """What the metrics read of the server (`webapp.WebApp`) when scraped."""

    bridges: list[Bridge]
    events: AppEvents
    node: Node | None
    tunnel: TunnelService | None
    boots: Counter[str]
    readiness: Readiness
    loop_lag: LoopLag

    @property
    def drain(self) -> Drain: ...


class Metrics:
    """One server's metrics: `call_finished()` counts a call, `exposition()` is the text a scrape gets."""

    def __init__(self, source: MetricsSource, known: Callable[[str], bool]) -> None:
        self.registry = CollectorRegistry()
        self._known = known
        self._codes: set[str] = set()
        self._calls = CounterFamily(
            "webapp_mcp_calls",
            "MCP tool calls that finished, by tool and outcome (ok, or the error code the caller got).",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self._durations = Histogram(
            "webapp_mcp_call_duration_seconds",
            "Seconds an MCP tool call took, by tool.",
            ["tool"],
            buckets=_BUCKETS,
            registry=self.registry,
        )
        self._tunnel_calls = CounterFamily(
            "webapp_tunnel_calls",
            "Calls of the tunnel tools that carry tunnelled views (app-only, kept out of the MCP call counts).",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.registry.register(_ServerCollector(source))

    def call_finished(self, tool: str, result: mcp_types.CallToolResult, seconds: float, *, plumbing: bool) -> None:
        """Count one finished call (`plumbing`: an app-only tool's, a tunnel's)."""
        name = tool if self._known(tool) else UNKNOWN_TOOL
        code = outcome_code(result)
        if code not in self._codes:
            if len(self._codes) >= _MOST_CODES:
                code = "OTHER"
            else:
                self._codes.add(code)
        if plumbing:
            self._tunnel_calls.labels(name, code).inc()
            return
        self._calls.labels(name, code).inc()
        self._durations.labels(name).observe(seconds)

    def exposition(self) -> bytes:
        """The Prometheus text format of every metric now (readiness as last reported: report it first)."""
        return generate_latest(self.registry)


class _ServerCollector(Collector):
    """The metrics read from the server's parts at each scrape."""

    def __init__(self, source: MetricsSource) -> None:
        self._source = source

    def collect(self) -> Iterable[Metric]:
        source = self._source
        yield from self._views(source.bridges)
        yield _counter("webapp_app_events_published", "App events published by this worker.", source.events.published)
        yield _counter(
            "webapp_app_events_delivered",
            "App events handed to a subscriber (a view) on this worker, one per subscriber.",
            source.events.delivered,
        )
        yield _gauge(
            "webapp_app_event_subscriptions",
            "Subscriptions to app events on this worker (about two per open view: one that stays is a view not freed).",
            source.events.subscriptions(),
        )
        yield _counter(
            "webapp_app_events_coalesced",
            "App events a view received merged into one update with an earlier one (--view-coalesce).",
            source.events.coalesced,
        )
        hits = sum(bridge.outcomes.hits for bridge in source.bridges if bridge.outcomes is not None)
        yield _counter("webapp_outcome_store_hits", "Retries (same _call_id) answered with the stored outcome.", hits)
        yield _labelled(
            CounterMetricFamily(
                "webapp_direct_boots", "Direct boots of a view page by ticket, by outcome.", labels=["outcome"]
            ),
            {(outcome,): source.boots[outcome] for outcome in _BOOTS},
        )
        tunnels = len(source.tunnel.tunnels) if source.tunnel is not None else 0
        yield _gauge(
            "webapp_tunnels_open", "Tunnels open on this worker (views carried through a host's calls).", tunnels
        )
        yield _gauge("webapp_calls_in_flight", "MCP tool calls running now.", source.drain.in_flight)
        yield _gauge(
            "webapp_draining", "1 while the worker is stopping (it takes no new calls).", source.drain.draining
        )
        yield _gauge(
            "webapp_loop_lag_seconds",
            "The most the event loop ran a timer late in the last 5 seconds: a loop that blocks delays every call and "
            "tab, and the heartbeat.",
            source.loop_lag.seconds,
        )
        yield from self._readiness(source.readiness)
        if source.node is not None:
            yield from self._cluster(source.node, source.bridges)

    def _views(self, bridges: Iterable[Bridge]) -> Iterable[Metric]:
        states: Counter[str] = Counter()
        tabs = 0
        for bridge in bridges:
            here = bridge.registry.worker
            for view in bridge.registry:
                if view.worker in (None, here):  # other workers' views, known here, are theirs to count
                    states[view.state.value] += 1
                tabs += view.client is not None
        family = GaugeMetricFamily("webapp_views", "Views this worker holds, by state.", labels=["state"])
        yield _labelled(family, {(state.value,): states[state.value] for state in ViewState})
        yield _gauge("webapp_tabs_attached", "Browser tabs attached to a view on this worker.", tabs)

    def _readiness(self, readiness: Readiness) -> Iterable[Metric]:
        report = readiness.latest
        if report is not None:
            yield _gauge("webapp_ready", "1 while /readyz answers 200 (database up, not draining).", report.ready)
            yield _gauge("webapp_database_up", "1 while the database answers the readiness check.", report.database)
        yield _counter(
            "webapp_readiness_changes", "How often readiness flipped (ready to not ready, or back).", readiness.changes
        )

    def _cluster(self, node: Node, bridges: Iterable[Bridge]) -> Iterable[Metric]:
        yield _gauge(
            "webapp_redis_up", "1 while this worker's Redis subscription (its inbox) listens.", node.inbox.subscribed
        )
        views: Counter[str] = Counter()
        for bridge in bridges:
            if isinstance(bridge.transport, RedisTransport):
                views.update(bridge.transport.forwarded)
        sent = {"view": views, "tunnel": node.tunnel_forwarded}
        family = CounterMetricFamily(
            "webapp_forwarded_calls",
            "Calls sent to the worker holding their view or tunnel, by kind and outcome (answered, asked: a round "
            "that asks the caller's client, moved, or the error code the caller got).",
            labels=["kind", "outcome"],
        )
        yield _labelled(
            family, {(kind, outcome): sent[kind][outcome] for kind, known in _FORWARDED.items() for outcome in known}
        )
        served = CounterMetricFamily(
            "webapp_forwarded_calls_served",
            "Calls other workers forwarded to this one, by kind (view, tunnel, moved: not here, refused: stopping).",
            labels=["kind"],
        )
        yield _labelled(served, {(kind,): node.served[kind] for kind in _SERVED})
        yield _counter(
            "webapp_app_events_received", "App events of other workers that reached this one.", node.relay.received
        )
        yield _counter(
            "webapp_app_event_frames_received",
            "Frames of other workers' app events that reached this one.",
            node.relay.frames,
        )
        yield _gauge(
            "webapp_app_event_window_seconds",
            "Seconds this worker's frames of app events are apart at least: N²/--events-budget for the N workers its "
            "last frame reached, at most 1.",
            node.relay.window,
        )


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=value)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=float(value))


def _labelled(family: _Family, values: Mapping[tuple[str, ...], float]) -> _Family:
    for labels, value in values.items():
        family.add_metric(list(labels), value)
    return family
