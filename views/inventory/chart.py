"""The chart card: units and value per category in the warehouse, or the selected item's stock history.

The views of a shared stock draw the chart at most once a second (`ChartPace`; the first change after the stock was
read draws at once): a burst of changes draws the newest chart once that second is over, with the first change after
it, or a quarter second later when none comes (a draw of its own is a message of its own to every watching view);
drawing is most of what a change costs a tab.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nicegui import ui

from actions.domain import Movement, ReportRow
from views.inventory.calls import BrowserCalls, encode_arguments, keep
from webapp import Island

__all__ = [
    "CategoryFigures",
    "ChartPace",
    "Figures",
    "HistoryFigures",
    "StockChart",
    "category_options",
    "history_options",
]

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
        "aria": {"enabled": True},  # ECharts writes the chart's figures as its aria-label: its text alternative
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
        "aria": {"enabled": True},  # ECharts writes the chart's figures as its aria-label: its text alternative
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

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CategoryFigures) and (other.rows, other.warehouse) == (self.rows, self.warehouse)

    def __hash__(self) -> int:
        return hash((self.rows, self.warehouse))

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

    def __eq__(self, other: object) -> bool:
        mine = (self.sku, self.movements, self.reorder_point)
        return isinstance(other, HistoryFigures) and (other.sku, other.movements, other.reorder_point) == mine

    def __hash__(self) -> int:
        return hash((self.sku, self.movements, self.reorder_point))

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


class ChartPace:
    """The figures the views of a shared stock draw: the newest, at most once a second. A change draws at once when
    the last draw is a second old, else the first change after that second does, or the end of `RIDE_SECONDS` after it
    when none comes (`late` is called then: the views draw alone). A burst of changes costs a watching view one drawing
    a second, and the drawing is made once for all of them."""

    def __init__(self, figures: Figures, late: Callable[[], None]) -> None:
        self.drawn = figures
        """What the views draw now."""
        self._newest = figures
        self._drawn_at = 0.0  # when a change last drew (monotonic seconds): the first change draws at once
        self._timer: asyncio.TimerHandle | None = None  # a draw waiting for the second to be over
        self._late = late

    def read(self, figures: Figures) -> None:
        """The figures as the store was read: drawn at once (with everything else read), unless they are the figures
        the views have (a refresh that found nothing new draws nothing: a draw is most of what a tab pays)."""
        self.close()
        if figures != self._newest:
            self._newest = figures
        self.drawn = self._newest

    def show(self, figures: Figures) -> None:
        """The figures after a change."""
        self._newest = figures
        if (wait := self._drawn_at + REDRAW_SECONDS - time.monotonic()) <= 0:
            self.close()
            self._draw()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait + RIDE_SECONDS, self._draw_late)

    def close(self) -> None:
        """No draw waits any more."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _draw(self) -> None:
        self.drawn, self._drawn_at = self._newest, time.monotonic()

    def _draw_late(self) -> None:
        self._timer = None
        if self._newest is not self.drawn:
            self._draw()
            self._late()


class StockChart:
    """One view's ECharts element, whose options are swapped between the two charts: it draws the figures of its
    shared stock's `ChartPace`."""

    def __init__(self) -> None:
        self._shown: Figures | None = None  # what the chart shows
        self._drawn: type[Figures] | None = None  # the kind of chart the tab draws
        self._titled = ("Stock by category", "")
        with Island().classes("nicegui-row row w-full items-baseline justify-between"):  # its texts render alone
            self.title = ui.label(self._titled[0]).classes("text-base font-semibold text-gray-800")
            self.subtitle = ui.label(self._titled[1]).classes("text-xs text-gray-500")
        self.chart = _Chart(category_options([])).classes("w-full h-72").props('data-testid="stock-chart"')

    def resend(self, calls: BrowserCalls) -> None:
        """The options the tab was sent last."""
        if self._drawn is not None:
            options = self.chart.props["options"]
            calls.method(self.chart, "run_chart_method", "setOption", options, {"notMerge": True}, at_frame=True)

    def show(self, figures: Figures, calls: BrowserCalls) -> None:
        """Draw these figures, at the tab's next animation frame (after the tab answered the change's confirmation);
        the server's copy (what a tab built later shows) changes with it. Other figures are another object."""
        if figures is self._shown:
            return
        titles = figures.titles()
        if self._titled != titles:  # set to itself, a text still walks its bindings
            self._titled = titles
            self.title.set_text(titles[0])
            self.subtitle.set_text(titles[1])
        first, self._shown = self._shown is None, figures
        drawing, kind = figures.drawing(), type(figures)
        keep(self.chart, "options", drawing.options)  # the server's copy, without an update of the element
        if first:  # the element's first options: sent as the element
            self.chart.update()
        else:
            arguments = drawing.merge if self._drawn is kind else drawing.replace
            calls.encoded(self.chart, "run_chart_method", arguments, at_frame=True)
        self._drawn = kind


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
