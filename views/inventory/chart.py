"""The chart card: units and value per category in the warehouse, or the selected item's stock history.

A chart whose figures change often redraws at most once a second: a burst of changes draws the newest figures once
(drawing is most of what a change costs a tab), and another chart, or another item's history, is drawn at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from nicegui import ui

from actions.domain import Movement, ReportRow
from views.inventory.calls import BrowserCalls

__all__ = ["StockChart", "category_options", "history_options"]

_INDIGO, _AMBER, _EMERALD = "#4f46e5", "#d97706", "#059669"
REDRAW_SECONDS = 1.0  # the shortest time between two draws of the same chart with new figures


def category_options(rows: Sequence[ReportRow]) -> dict[str, Any]:
    """A horizontal bar chart: on-hand units per category, low-stock rows as a second series."""
    ordered = sorted(rows, key=lambda row: row.units_on_hand)
    return {
        "animation": False,  # a live view redraws often: no growing bars on every change
        "tooltip": {"trigger": "axis", "axisPointer": {"type": "shadow"}},
        "legend": {"bottom": 0, "icon": "circle", "itemWidth": 8},
        "grid": {"left": 8, "right": 24, "top": 8, "bottom": 32, "containLabel": True},
        "xAxis": {"type": "value", "splitLine": {"lineStyle": {"color": "#f1f5f9"}}},
        "yAxis": {"type": "category", "data": [row.group for row in ordered], "axisTick": {"show": False}},
        "series": [
            {
                "name": "Units on hand",
                "type": "bar",
                "data": [row.units_on_hand for row in ordered],
                "itemStyle": {"color": _INDIGO, "borderRadius": [0, 4, 4, 0]},
                "barMaxWidth": 14,
            },
            {
                "name": "Low-stock items",
                "type": "bar",
                "data": [row.low_stock for row in ordered],
                "itemStyle": {"color": _AMBER, "borderRadius": [0, 4, 4, 0]},
                "barMaxWidth": 14,
            },
        ],
    }


def history_options(movements: Sequence[Movement], reorder_point: int) -> dict[str, Any]:
    """A step line of on-hand units after each movement (oldest first), with the reorder point marked."""
    ordered = sorted(movements, key=lambda m: (m.at, m.id))
    points = [[m.at.isoformat(), m.on_hand_after] for m in ordered]
    return {
        "animation": False,  # a live view redraws often: no growing bars on every change
        "tooltip": {"trigger": "axis"},
        "grid": {"left": 8, "right": 24, "top": 16, "bottom": 8, "containLabel": True},
        "xAxis": {"type": "time", "splitLine": {"show": False}, "axisLabel": {"hideOverlap": True}},
        "yAxis": {"type": "value", "min": 0, "splitLine": {"lineStyle": {"color": "#f1f5f9"}}},
        "series": [
            {
                "name": "On hand",
                "type": "line",
                "step": "end",
                "data": points,
                "symbolSize": 6,
                "itemStyle": {"color": _EMERALD},
                "areaStyle": {"color": "rgba(5, 150, 105, 0.08)"},
                "markLine": {
                    "symbol": "none",
                    "label": {"formatter": "reorder point", "position": "insideEndTop"},
                    "lineStyle": {"color": _AMBER, "type": "dashed"},
                    "data": [{"yAxis": reorder_point}],
                },
            }
        ],
    }


class StockChart:
    """One ECharts element whose options are swapped between the two charts (sent only when they change)."""

    def __init__(self) -> None:
        self._shown: tuple[object, ...] = ()  # what the chart shows: ("categories", rows) or ("history", ...)
        self._redraw: list[Any] | None = None  # the newest figures' `setOption` arguments, not drawn yet
        self._drawn_at = 0.0  # when the tab was last sent a draw (monotonic seconds)
        self._timer: asyncio.TimerHandle | None = None
        with ui.row().classes("w-full items-baseline justify-between"):
            self.title = ui.label("Stock by category").classes("text-base font-semibold text-gray-800")
            self.subtitle = ui.label("").classes("text-xs text-gray-500")
        self.chart = ui.echart(category_options([])).classes("w-full h-72").props('data-testid="stock-chart"')

    def show_categories(self, rows: Sequence[ReportRow], warehouse: str, calls: BrowserCalls) -> None:
        self.title.set_text("Stock by category")
        self.subtitle.set_text(f"units on hand in {warehouse}")
        shown = ("categories", tuple(rows))
        if shown == self._shown:
            return  # the same figures: nothing to send
        options = category_options(rows)
        if self._shown[:1] == ("categories",):  # the same chart, other figures: those, soon
            axis, series = options["yAxis"]["data"], [item["data"] for item in options["series"]]
            with self.chart.props.suspend_updates():
                self.chart.options["yAxis"]["data"] = axis
                for item, data in zip(self.chart.options["series"], series, strict=True):
                    item["data"] = data
            self._draw_soon(["setOption", {"yAxis": {"data": axis}, "series": [{"data": d} for d in series]}], calls)
        else:
            self._set(options, calls)
        self._shown = shown

    def show_history(self, sku: str, movements: Sequence[Movement], reorder_point: int, calls: BrowserCalls) -> None:
        self.title.set_text(f"History of {sku}")
        count = len(movements)
        self.subtitle.set_text(
            f"on hand after each of the last {count} movements" if count else "no movements in this warehouse yet"
        )
        shown = ("history", sku, tuple(movements), reorder_point)
        if shown == self._shown:
            return
        options = history_options(movements, reorder_point)
        if self._shown[:2] == ("history", sku):  # the same item's history, longer: soon
            with self.chart.props.suspend_updates():
                self.chart.options.clear()
                self.chart.options.update(options)
            self._draw_soon(["setOption", options, {"notMerge": True}], calls)
        else:
            self._set(options, calls)
        self._shown = shown

    def _set(self, options: dict[str, Any], calls: BrowserCalls) -> None:
        """Another chart, drawn now: once the chart has been shown, a replacing `setOption` at the next frame (an
        element update would draw it before the tab answers), else the element; the server's copy follows either
        way."""
        with self.chart.props.suspend_updates():
            self.chart.options.clear()
            self.chart.options.update(options)
        self._redraw = None  # figures of the chart shown before are not drawn any more
        if self._shown:
            self._draw(["setOption", options, {"notMerge": True}], calls)
        else:
            self.chart.update()

    def _draw_soon(self, arguments: list[Any], calls: BrowserCalls) -> None:
        """Draw with this change when the last draw is a second old, else once that second is over (the newest
        figures then)."""
        wait = self._drawn_at + REDRAW_SECONDS - time.monotonic()
        if wait <= 0:
            self._redraw = None  # these figures are newer than any waiting
            self._draw(arguments, calls)
            return
        self._redraw = arguments
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._draw_late, calls)

    def _draw(self, arguments: list[Any], calls: BrowserCalls) -> None:
        # at the tab's next animation frame, after it answered the change's confirmation; drawn in that frame
        calls.method(self.chart, "run_chart_method", *arguments, at_frame=True)
        self._drawn_at = time.monotonic()

    def _draw_late(self, calls: BrowserCalls) -> None:
        self._timer = None
        if self._redraw is not None and not self.chart.is_deleted:
            self._draw(self._redraw, calls)
            calls.send()
        self._redraw = None
