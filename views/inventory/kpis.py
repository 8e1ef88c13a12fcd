"""The four KPI cards at the top of the inventory view: items, units on hand, stock value, low stock."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nicegui import ui

from actions.domain import WarehouseKpis
from views.inventory.calls import BrowserCalls, Call, encode_arguments, keep
from views.inventory.format import money, units
from webapp import Island

__all__ = ["NO_KPIS", "KpiCards", "KpiTexts", "figure_calls", "kpi_texts"]


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


@dataclass(frozen=True, slots=True)
class KpiTexts:
    """What the cards show for some KPIs, in the order of `_KPIS`: each card's figure, the figures as `show`'s encoded
    arguments, each card's hint; and whether items are low on stock."""

    figures: tuple[str, ...]
    arguments: tuple[str, ...]
    hints: tuple[str, ...]
    low: bool


NO_KPIS = KpiTexts(  # the cards before the first KPIs
    tuple(_NO_FIGURE for _ in _KPIS), tuple("" for _ in _KPIS), tuple("" for _ in _KPIS), False
)


class _Figure(ui.element, component="kpi_figure.js"):
    """A card's figure: its text is the `text` prop, which a change sets in the tab with a method call. The server's
    copy is written when the element is sent (a page built, the element updated), not by every change."""

    def __init__(self, text: Callable[[], str]) -> None:
        super().__init__()
        self._current = text

    def _to_dict(self) -> dict[str, Any]:
        keep(self, "text", self._current())
        return super()._to_dict()


@functools.lru_cache(maxsize=16)
def kpi_texts(kpis: WarehouseKpis) -> KpiTexts:
    """The cards' texts for these KPIs: written once for every view of the warehouse."""
    low = "below reorder point" if kpis.low_stock else "all items above reorder point"
    figures = (units(kpis.items), units(kpis.units_on_hand), money(kpis.stock_value_cents), units(kpis.low_stock))
    hints = (f"SKUs stocked in {kpis.warehouse}", "reserved units included", "on hand × unit cost", low)
    return KpiTexts(figures, tuple(map(encode_arguments, figures)), hints, bool(kpis.low_stock))


def _changed_figures(before: KpiTexts, after: KpiTexts) -> list[tuple[int, str]]:
    """The cards whose figure differs, each with its new figure as `show`'s encoded arguments."""
    changed = zip(after.figures, before.figures, after.arguments, strict=True)
    return [(place, arguments) for place, (new, old, arguments) in enumerate(changed) if new != old]


def figure_calls(before: KpiTexts, after: KpiTexts) -> list[Call]:
    """The calls that bring cards showing `before` to `after` (to the parts "kpi0" to "kpi3")."""
    return [(f"kpi{place}", "show", arguments) for place, arguments in _changed_figures(before, after)]


class KpiCards:
    """A responsive row of cards whose figures change in place, and only when they changed: a changed figure travels
    as a method call with the change (a label's update would add its whole element to the message of every watching
    view)."""

    def __init__(self) -> None:
        self._shown = NO_KPIS  # the texts the tab shows
        self.figures: list[_Figure] = []  # in the order of the cards (the parts "kpi0" to "kpi3")
        self._hints: list[ui.label] = []
        with ui.element("div").classes("grid grid-cols-1 min-[440px]:grid-cols-2 lg:grid-cols-4 gap-4 w-full"):
            for place, kpi in enumerate(_KPIS):
                card = ui.card().classes("p-4 shadow-sm").props(f'flat bordered data-testid="kpi-{kpi.key}"')
                with card, ui.row().classes("items-center gap-3 no-wrap"):
                    ui.icon(kpi.icon, size="sm").classes(f"rounded-lg p-2 {kpi.color}")
                    with Island().classes("nicegui-column gap-0"):  # a change renders the figures, not the card
                        ui.label(kpi.label).classes("text-xs uppercase tracking-wide text-gray-500")
                        figure = _Figure(functools.partial(self._figure, place))
                        self.figures.append(figure.classes("text-2xl font-semibold text-gray-900"))
                        self._hints.append(ui.label("").classes("text-xs text-gray-500"))

    def resend(self, calls: BrowserCalls) -> None:
        for figure, text in zip(self.figures, self._shown.figures, strict=True):
            calls.method(figure, "show", text)

    def show(self, texts: KpiTexts, calls: BrowserCalls) -> None:
        """Show `texts`: the tab is sent the figures that differ from what it shows."""
        if texts is not self._shown:
            for place, arguments in _changed_figures(self._shown, texts):
                calls.encoded(self.figures[place], "show", arguments)
            self.adopt(texts)

    def adopt(self, texts: KpiTexts) -> None:
        """Show `texts`, whose figures the tab is sent by calls made for many views (`figure_calls`)."""
        shown, self._shown = self._shown, texts
        if texts is shown:  # the same figures (the texts of equal KPIs are written once)
            return
        if texts.hints != shown.hints:
            for hint, shown_hint, label in zip(texts.hints, shown.hints, self._hints, strict=True):
                if hint != shown_hint:
                    label.set_text(hint)
        if texts.low is not shown.low or shown is NO_KPIS:
            self.figures[-1].classes(  # the low-stock card's
                replace="text-2xl font-semibold " + ("text-amber-600" if texts.low else "text-gray-900")
            )

    def _figure(self, place: int) -> str:
        return self._shown.figures[place]
