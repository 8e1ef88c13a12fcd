"""The chart card: units and value per category in the warehouse, or the selected item's stock history."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from nicegui import ui

from actions.domain import Movement, ReportRow

__all__ = ["StockChart", "category_options", "history_options"]

_INDIGO, _AMBER, _EMERALD = "#4f46e5", "#d97706", "#059669"


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
    """One ECharts element whose options are swapped between the two charts."""

    def __init__(self) -> None:
        with ui.row().classes("w-full items-baseline justify-between"):
            self.title = ui.label("Stock by category").classes("text-base font-semibold text-gray-800")
            self.subtitle = ui.label("").classes("text-xs text-gray-500")
        self.chart = ui.echart(category_options([])).classes("w-full h-72").props('data-testid="stock-chart"')

    def show_categories(self, rows: Sequence[ReportRow], warehouse: str) -> None:
        self.title.set_text("Stock by category")
        self.subtitle.set_text(f"units on hand in {warehouse}")
        self._set(category_options(rows))

    def show_history(self, sku: str, movements: Sequence[Movement], reorder_point: int) -> None:
        self.title.set_text(f"History of {sku}")
        count = len(movements)
        self.subtitle.set_text(
            f"on hand after each of the last {count} movements" if count else "no movements in this warehouse yet"
        )
        self._set(history_options(movements, reorder_point))

    def _set(self, options: dict[str, Any]) -> None:
        self.chart.options.clear()
        self.chart.options.update(options)
        self.chart.update()
