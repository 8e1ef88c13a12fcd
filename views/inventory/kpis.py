"""The four KPI cards at the top of the inventory view: items, units on hand, stock value, low stock."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from nicegui import ui

from actions.domain import WarehouseKpis
from views.inventory.calls import BrowserCalls, encode_arguments, keep
from views.inventory.format import money, units
from webapp import Island

__all__ = ["KpiCards"]


@dataclass(frozen=True, slots=True)
class _Kpi:
    key: str
    label: str
    icon: str
    color: str


_KPIS = (
    _Kpi("items", "Items", "inventory_2", "text-indigo-600 bg-indigo-50"),
    _Kpi("units", "Units on hand", "stacked_bar_chart", "text-sky-600 bg-sky-50"),
    _Kpi("value", "Stock value", "payments", "text-emerald-600 bg-emerald-50"),
    _Kpi("low", "Low stock", "warning", "text-amber-600 bg-amber-50"),
)
_NO_FIGURE = "–"

_Texts = tuple[tuple[str, str, str], ...]
"""Each card's figure, the figure as `show`'s encoded arguments, and hint, in the order of `_KPIS`."""
_UNSHOWN: _Texts = tuple((_NO_FIGURE, "", "") for _ in _KPIS)  # the cards before the first KPIs


class _Figure(ui.element, component="kpi_figure.js"):
    """A card's figure: its text is the `text` prop, which a change sets in the tab with a method call."""

    def __init__(self) -> None:
        super().__init__()
        self.props["text"] = _NO_FIGURE


@functools.lru_cache(maxsize=16)
def _texts(kpis: WarehouseKpis) -> _Texts:
    """The cards' texts for these KPIs: written once for every view of the warehouse."""
    low = "below reorder point" if kpis.low_stock else "all items above reorder point"
    cards = (
        (units(kpis.items), f"SKUs stocked in {kpis.warehouse}"),
        (units(kpis.units_on_hand), "reserved units included"),
        (money(kpis.stock_value_cents), "on hand × unit cost"),
        (units(kpis.low_stock), low),
    )
    return tuple((figure, encode_arguments(figure), hint) for figure, hint in cards)


class KpiCards:
    """A responsive row of cards; `update()` changes the figures in place, and only when they changed: a changed
    figure travels as a method call with the change (a label's update would add its whole element to the message of
    every watching view)."""

    def __init__(self) -> None:
        self._shown = _UNSHOWN  # the texts the tab shows
        self._low: bool | None = None
        self._figures: list[_Figure] = []  # in the order of the cards
        self._hints: list[ui.label] = []
        with ui.element("div").classes("grid grid-cols-2 lg:grid-cols-4 gap-4 w-full"):
            for kpi in _KPIS:
                card = ui.card().classes("p-4 shadow-sm").props(f'flat bordered data-testid="kpi-{kpi.key}"')
                with card, ui.row().classes("items-center gap-3 no-wrap"):
                    ui.icon(kpi.icon, size="sm").classes(f"rounded-lg p-2 {kpi.color}")
                    with Island().classes("nicegui-column gap-0"):  # a change renders the figures, not the card
                        ui.label(kpi.label).classes("text-xs uppercase tracking-wide text-gray-500")
                        self._figures.append(_Figure().classes("text-2xl font-semibold text-gray-900"))
                        self._hints.append(ui.label("").classes("text-xs text-gray-400"))

    def resend(self, calls: BrowserCalls) -> None:
        for figure in self._figures:
            calls.method(figure, "show", figure.props["text"])

    def update(self, kpis: WarehouseKpis, calls: BrowserCalls) -> None:
        texts = _texts(kpis)
        if texts is self._shown:  # the same figures (the texts of equal KPIs are written once)
            return
        cards = zip(texts, self._shown, self._figures, self._hints, strict=True)
        for (figure, arguments, hint), (shown_figure, _, shown_hint), figure_element, hint_label in cards:
            if figure != shown_figure:
                keep(figure_element, "text", figure)
                calls.encoded(figure_element, "show", arguments)
            if hint != shown_hint:
                hint_label.set_text(hint)
        self._shown = texts
        if self._low is not bool(kpis.low_stock):
            self._low = bool(kpis.low_stock)
            self._figures[-1].classes(  # the low-stock card's
                replace="text-2xl font-semibold " + ("text-amber-600" if self._low else "text-gray-900")
            )
