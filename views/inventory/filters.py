"""The filter bar above the stock table: search, category, low stock only. The agent's filters show here too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nicegui import ui

from views.inventory.calls import BrowserCalls
from webapp import Island

__all__ = ["FilterBar", "FilterChange"]

FilterChange = Callable[[dict[str, Any]], None]
"""Called with the changed field as the view's input names it (`search`, `category`, `low_stock_only`)."""

_ALL = ""


class _SearchBox(ui.input):
    def show(self, text: str, calls: BrowserCalls) -> None:
        """Show `text`; the input's own copy of it follows through `calls`, in the change's message (NiceGUI would send
        it as a message of its own, and the acting call would wait for a second round trip to the tab)."""
        if self.value == text:
            return
        self._send_update_on_value_change = False
        try:
            self.set_value(text)
        finally:
            self._send_update_on_value_change = True
        self.update()
        calls.method(self, "updateValue")


class FilterBar:
    """`show()` sets the controls without reporting a change back."""

    def __init__(self, categories: Sequence[str], on_change: FilterChange) -> None:
        self._on_change = on_change
        self._muted = False
        # islands: an agent's filter re-renders the bar (its search alone re-renders the search box), not the card
        # with the table around it
        with Island().classes("nicegui-row row w-full items-center gap-3"):
            with Island():
                self.search = (
                    _SearchBox(placeholder="Search SKU or name", on_change=lambda e: self._changed("search", e.value))
                    .props('dense outlined clearable debounce=300 data-testid="filter-search"')
                    .classes("w-64")
                )
                with self.search.add_slot("prepend"):
                    ui.icon("search", size="xs")
            options = {_ALL: "All categories"} | {name: name for name in categories}
            self.category = (
                ui.select(options, value=_ALL, on_change=lambda e: self._changed("category", e.value))
                .props('dense outlined options-dense data-testid="filter-category"')
                .classes("w-48")
            )
            self.low = ui.switch("Low stock only", on_change=lambda e: self._changed("low_stock_only", e.value)).props(
                'dense color=amber-8 data-testid="filter-low"'
            )

    def show(self, search: str | None, category: str | None, low_stock_only: bool, calls: BrowserCalls) -> None:
        self._muted = True
        try:
            self.search.show(search or "", calls)
            options = self.category.options
            known = category if isinstance(options, dict) and category in options else _ALL
            self.category.set_value(known)
            self.low.set_value(low_stock_only)
        finally:
            self._muted = False

    def _changed(self, name: str, value: Any) -> None:
        if self._muted:
            return
        if name == "search":
            value = (value or "").strip() or None
        elif name == "category":
            value = value or None
        self._on_change({name: value})
