"""Where a watching inventory view's update goes (`--app bench.support.view_steps:build`): the inventory app, its
view's update steps timed inside the server, and a plain tool `view_steps` that answers the timings so far as JSON
(`{step: [calls, nanoseconds]}`) and starts them anew.

The steps are the view's own: taking a change (`_changed`: the next four steps and its send included), the shared
stock applying it (once for the views that show the same, counted here per view), the group's calls sent to the view's
parts, its KPI cards' texts, the parts each view shows itself (the count, the item panel, the chart), the chart's
draws (a view's takes outside a change: the draws that waited for the second to be over, a message of their own),
handing the calls to NiceGUI, and the calls element made into its message when the update goes out. A timer costs
about 0.3 µs, once per step."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from typing import Any

from views.inventory import build as build_inventory
from views.inventory.calls import BrowserCalls
from views.inventory.kpis import KpiCards
from views.inventory.page import InventoryView
from views.inventory.shared import SharedStock
from webapp import Tool, WebApp

__all__ = ["LATE", "STEPS", "build"]

STEPS: dict[str, tuple[type, str]] = {
    "taking a change (the next four, its send)": (InventoryView, "_changed"),
    "the shared stock applying it (per group)": (SharedStock, "_changed"),
    "the group's calls sent to the view's parts": (InventoryView, "_take"),
    "the KPI cards' texts": (KpiCards, "adopt"),
    "the view's own parts (count, item, chart)": (InventoryView, "_show_own"),
    "handing the calls to NiceGUI": (BrowserCalls, "send"),
    "the calls made into their message": (BrowserCalls, "_to_dict"),
}

LATE = "late chart draws (takes outside a change)"
"""A view's takes of its group's steps that no change of its own brought (the chart's late draws, a group's read)."""

_timings: dict[str, list[int]] = {}
_changing = [False]  # whether a view is taking a change (`InventoryView._changed`)


def _timed(step: str, method: Callable[..., Any]) -> Callable[..., Any]:
    timing = _timings.setdefault(step, [0, 0])

    @functools.wraps(method)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter_ns()
        try:
            return method(*args, **kwargs)
        finally:
            timing[0] += 1
            timing[1] += time.perf_counter_ns() - started

    return timed


def _flagged(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def changing(*args: Any, **kwargs: Any) -> Any:
        _changing[0] = True
        try:
            return method(*args, **kwargs)
        finally:
            _changing[0] = False

    return changing


def _outside(method: Callable[..., Any]) -> Callable[..., Any]:
    late = _timed(LATE, method)

    @functools.wraps(method)
    def take(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs) if _changing[0] else late(*args, **kwargs)

    return take


def _answer() -> str:
    """The timings so far, as JSON; they start anew."""
    answer = json.dumps(_timings)
    for timing in _timings.values():
        timing[:] = [0, 0]
    return answer


def build(webapp: WebApp) -> None:
    """The inventory app with its view's steps timed, and the `view_steps` tool."""
    if not _timings:  # once per process
        for step, (owner, name) in STEPS.items():
            setattr(owner, name, _timed(step, getattr(owner, name)))
        for name, wrap in (("_changed", _flagged), ("_take", _outside)):
            setattr(InventoryView, name, wrap(getattr(InventoryView, name)))
    build_inventory(webapp)
    description = "The inventory view's step timings so far, as JSON; starts them anew."
    webapp.add_tool(Tool("view_steps", description=description, handler=_answer))
