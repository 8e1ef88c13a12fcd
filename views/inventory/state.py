"""What one inventory view shows — warehouse, filters, selected item, who drives it — where it starts, and how it is
saved.

The state lives in the view's `data` dict (saved by the framework after every call and restored on reload and
restart); this module reads and writes that dict.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass, replace
from typing import Any

from actions.domain import StockFilter

__all__ = ["InventoryState"]


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class InventoryState:
    """`warehouse` is a known warehouse code; `selected` an sku or None; `driven` once an agent has acted."""

    warehouse: str
    search: str | None = None
    category: str | None = None
    low_stock_only: bool = False
    selected: str | None = None
    driven: bool = False

    @classmethod
    def load(cls, data: Mapping[str, Any]) -> InventoryState | None:
        """The saved state, or None when nothing was saved yet."""
        warehouse = _text(data.get("warehouse"))
        if warehouse is None:
            return None
        return cls(
            warehouse=warehouse,
            search=_text(data.get("search")),
            category=_text(data.get("category")),
            low_stock_only=data.get("low_stock_only") is True,
            selected=_text(data.get("selected")),
            driven=data.get("driven") is True,
        )

    @classmethod
    def initial(
        cls,
        data: Mapping[str, Any],
        opening: Mapping[str, Any] | None,
        default: str,
        codes: Collection[str],
        *,
        driven: Callable[[], bool],
        spelled: Callable[[str | None], str | None],
    ) -> tuple[InventoryState, str | None]:
        """The saved state, else the opening input's (its sent fields; `spelled`: a category as the store spells it),
        else the default warehouse's; `driven` says whether an agent opened the view. The opening tool refuses unknown
        warehouses, so only a stale view (its warehouse gone from the database since) falls back to the default, with
        a notice that says so."""
        saved = cls.load(data)
        if saved is not None and saved.warehouse in codes:
            return saved, None
        fresh = cls(warehouse=default, driven=driven())
        if opening is None:
            return fresh, None
        state = fresh.with_filters(opening)
        state = replace(state, category=spelled(state.category))
        if state.warehouse in codes:
            return state, None
        return replace(state, warehouse=default), (
            f"The warehouse '{state.warehouse}' no longer exists. Showing {default} instead."
        )

    @property
    def filters(self) -> StockFilter:
        return StockFilter(self.search, self.category, self.low_stock_only)

    def save(self, data: MutableMapping[str, Any]) -> None:
        """Write into the framework's dict in place (it holds a reference to it)."""
        data.update(
            warehouse=self.warehouse,
            search=self.search,
            category=self.category,
            low_stock_only=self.low_stock_only,
            selected=self.selected,
            driven=self.driven,
        )

    def with_filters(self, changes: Mapping[str, Any]) -> InventoryState:
        """Apply the sent input fields (`warehouse_code`, `search`, `category`, `low_stock_only`)."""
        state = self
        if "warehouse_code" in changes:
            code = _text(changes["warehouse_code"])
            if code is not None and code.upper() != state.warehouse:
                state = replace(state, warehouse=code.upper(), selected=None)
        if "search" in changes:
            state = replace(state, search=_text(changes["search"]))
        if "category" in changes:
            state = replace(state, category=_text(changes["category"]))
        if "low_stock_only" in changes:
            state = replace(state, low_stock_only=changes["low_stock_only"] is True)
        return state
