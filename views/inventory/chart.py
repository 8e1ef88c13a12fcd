"""The chart card: units and value per category in the warehouse, or the selected item's stock history.

The tab draws the chart at most once a second (the first change after the tab opened draws at once): a burst of
changes (or of selections) draws the newest chart once that second is over, with the first change after it, or a
quarter second later when none comes (a draw of its own is a message of its own to every watching view); drawing is
most of what a change costs a tab.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nicegui import ui

from actions.domain import Movement, ReportRow
from views.inventory.calls import BrowserCalls, encode_arguments, keep
from webapp import Island

__all__ = ["CategoryFigures", "Figures", "HistoryFigures", "StockChart", "category_options", "history_options"]

_INDIGO, _AMBER, _EMERALD = "#4f46e5", "#d97706", "#059669"
REDRAW_SECONDS = 1.0  # the shortest time between two draws of the chart
RIDE_SECONDS = 0.25  # how long a due draw waits for a change to go with before it is sent alone


def category_options(rows: Sequence[ReportRow]) -> dict[str, Any]:
    """A horizontal bar chart: on-hand units per category, low-stock rows as a second series."""
    return _category_options(tuple(rows))


@functools.lru_cache(maxsize=16)
def _category_options(rows: tuple[ReportRow, ...]) -> dict[str, Any]:
    """Made once for every view of the warehouse that shows these figures (never mutated)."""
    ordered = sorted(rows, key=lambda row: row.units_on_hand)
    return {
        "animation": False,  # a live view redraws often: no growing bars on every change
        "tooltip": {"trigger": "axis", "axisPointer": {"type": "shadow"}},
        "legend": {"bottom": 0, "icon": "circle", "itemWidth": 8},
        "grid": {"left": 8, "right": 24, "top": 8, "bottom": 32, "containLabel": True},
        "xAxis": {"type": "value", "splitLine": {"lineStyle": {"color": "#f1f5f9"}}},
        "yAxis": {"type": "category", "data": tuple(row.group for row in ordered), "axisTick": {"show": False}},
        "series": [
            {
                "name": "Units on hand",
                "type": "bar",
                "data": tuple(row.units_on_hand for row in ordered),
                "itemStyle": {"color": _INDIGO, "borderRadius": [0, 4, 4, 0]},
                "barMaxWidth": 14,
            },
            {
                "name": "Low-stock items",
                "type": "bar",
                "data": tuple(row.low_stock for row in ordered),
                "itemStyle": {"color": _AMBER, "borderRadius": [0, 4, 4, 0]},
                "barMaxWidth": 14,
            },
        ],
    }


def history_options(movements: Sequence[Movement], reorder_point: int) -> dict[str, Any]:
    """A step line of on-hand units after each movement (oldest first), with the reorder point marked."""
    ordered = sorted(movements, key=lambda m: (m.at, m.id))
    points = tuple((m.at.isoformat(), m.on_hand_after) for m in ordered)
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
                    "data": ({"yAxis": reorder_point},),
                },
            }
        ],
    }


@dataclass(frozen=True, slots=True)
class _Drawing:
    """A chart's options and its draw's arguments (`setOption`'s, encoded): `merge` into a drawn chart of the same
    kind (ECharts keeps its axes and components, a third less drawing), or `replace` a chart of another kind."""

    options: dict[str, Any]
    merge: str
    replace: str


def _drawing(options: dict[str, Any]) -> _Drawing:
    replace = encode_arguments("setOption", options, {"notMerge": True})
    return _Drawing(options, encode_arguments("setOption", _figures(options)), replace)


@functools.lru_cache(maxsize=16)
def _category_drawing(rows: tuple[ReportRow, ...]) -> _Drawing:
    """Made once for every view of the warehouse that draws these figures."""
    return _drawing(_category_options(rows))


class CategoryFigures:
    """The chart of a warehouse's categories, with these figures (its drawing made once, for every view that shows
    them)."""

    __slots__ = ("_drawing", "rows", "warehouse")

    def __init__(self, rows: tuple[ReportRow, ...], warehouse: str) -> None:
        self.rows = rows
        self.warehouse = warehouse
        self._drawing: _Drawing | None = None

    def titles(self) -> tuple[str, str]:
        return "Stock by category", f"units on hand in {self.warehouse}"

    def drawing(self) -> _Drawing:
        if self._drawing is None:
            self._drawing = _category_drawing(self.rows)
        return self._drawing


class HistoryFigures:
    """The chart of one item's stock history (its last movements, newest first)."""

    __slots__ = ("_drawing", "movements", "reorder_point", "sku")

    def __init__(self, sku: str, movements: tuple[Movement, ...], reorder_point: int) -> None:
        self.sku = sku
        self.movements = movements
        self.reorder_point = reorder_point
        self._drawing: _Drawing | None = None

    def titles(self) -> tuple[str, str]:
        count = len(self.movements)
        about = f"on hand after each of the last {count} movements" if count else "no movements in this warehouse yet"
        return f"History of {self.sku}", about

    def drawing(self) -> _Drawing:
        if self._drawing is None:
            self._drawing = _drawing(history_options(self.movements, self.reorder_point))
        return self._drawing


Figures = CategoryFigures | HistoryFigures


class _Chart(ui.echart, component="chart.js"):
    """`ui.echart` drawn by chart.js: the same options and chart methods, a render loop that sleeps sooner."""


class StockChart:
    """One ECharts element whose options are swapped between the two charts (sent only when they change)."""

    def __init__(self) -> None:
        self._shown: Figures | None = None  # what the chart shows
        self._drawn: type[Figures] | None = None  # the kind of chart the tab draws
        self._drawn_at = 0.0  # when the tab was last sent a draw (monotonic seconds)
        self._undrawn = False  # whether the tab has not been sent the chart shown yet
        self._timer: asyncio.TimerHandle | None = None  # a draw waiting for the second to be over
        self._titled = ("Stock by category", "")
        with Island().classes("nicegui-row row w-full items-baseline justify-between"):  # its texts render alone
            self.title = ui.label(self._titled[0]).classes("text-base font-semibold text-gray-800")
            self.subtitle = ui.label(self._titled[1]).classes("text-xs text-gray-500")
        self.chart = _Chart(category_options([])).classes("w-full h-72").props('data-testid="stock-chart"')

    def resend(self, calls: BrowserCalls) -> None:
        """The options the tab was sent last (a draw still waiting goes when its second is over)."""
        if self._drawn is not None:
            options = self.chart.props["options"]
            calls.method(self.chart, "run_chart_method", "setOption", options, {"notMerge": True}, at_frame=True)

    def show(self, figures: Figures, calls: BrowserCalls) -> None:
        """Show these figures (made once for the views that show the same: other figures are another object)."""
        if figures is self._shown:
            return
        titles = figures.titles()
        if self._titled != titles:  # set to itself, a text still walks its bindings
            self._titled = titles
            self.title.set_text(titles[0])
            self.subtitle.set_text(titles[1])
        self._show(figures, calls)

    def _show(self, shown: Figures, calls: BrowserCalls) -> None:
        """The tab draws the chart with this change when its last draw is a second old, else with the first change
        after that second (or `RIDE_SECONDS` after it, alone); the drawing is made then, and the server's copy (what
        a tab built later shows) changes with it: a burst of changes costs a watching view one drawing a second."""
        first, self._shown, self._undrawn = self._shown is None, shown, True
        if first:  # the element's first options: sent as the element; the first change after it draws with it at once,
            keep(self.chart, "options", shown.drawing().options)
            self.chart.update()  # so a change right after a tab opened reaches it whole, in one message
            self._drawn, self._undrawn = type(shown), False
            return
        if (wait := self._drawn_at + REDRAW_SECONDS - time.monotonic()) <= 0:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._draw(calls)
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait + RIDE_SECONDS, self._draw_late, calls)

    def _draw(self, calls: BrowserCalls) -> None:
        """The chart shown, at the tab's next animation frame (after the tab answered the change's confirmation)."""
        if not self._undrawn or self._shown is None:
            return
        drawing, kind = self._shown.drawing(), type(self._shown)
        keep(self.chart, "options", drawing.options)  # the server's copy, without an update of the element
        arguments = drawing.merge if self._drawn is kind else drawing.replace
        calls.encoded(self.chart, "run_chart_method", arguments, at_frame=True)
        self._drawn, self._drawn_at, self._undrawn = kind, time.monotonic(), False

    def _draw_late(self, calls: BrowserCalls) -> None:
        self._timer = None
        if not self.chart.is_deleted:
            self._draw(calls)
            calls.send()


def _figures(options: dict[str, Any]) -> dict[str, Any]:
    """What differs between two charts of one kind, as an ECharts merge: the category axis, the series' data and the
    reorder point's line."""
    figures: dict[str, Any] = {"series": [_series_figures(series) for series in options["series"]]}
    if "data" in options["yAxis"]:
        figures["yAxis"] = {"data": options["yAxis"]["data"]}
    return figures


def _series_figures(series: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, Any] = {"data": series["data"]}
    if "markLine" in series:
        figures["markLine"] = {"data": series["markLine"]["data"]}
    return figures
