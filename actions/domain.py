"""The inventory vocabulary: warehouses, items, stock rows, movements, reports and the domain errors.

Pure values (frozen dataclasses) with no I/O; the store builds them and the views and presenters read them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, Literal

__all__ = [
    "MAX_QUANTITY",
    "MAX_REASON_LENGTH",
    "Actor",
    "InsufficientStock",
    "InvalidRequest",
    "InventoryError",
    "Item",
    "Movement",
    "Overview",
    "ReportGrouping",
    "ReportRow",
    "StockFilter",
    "StockRow",
    "StockSort",
    "Transfer",
    "UnknownSku",
    "UnknownWarehouse",
    "Warehouse",
    "WarehouseKpis",
    "WarehouseSummary",
    "category_order",
    "check_actor",
    "check_limit",
    "check_quantity",
    "check_reason",
    "field_values",
    "norm_code",
]

Actor = Literal["agent", "person"]
"""Who made a change: an AI agent over MCP, or a person in the browser."""

StockSort = Literal["sku", "name", "category", "on_hand", "reserved", "available", "reorder_point", "stock_value"]
"""Columns a stock list can be sorted by (ties are broken by sku)."""

ReportGrouping = Literal["category", "warehouse"]

MAX_REASON_LENGTH = 200
MAX_QUANTITY = 1_000_000
"""Largest quantity one change may move; a bigger number is almost certainly a typo."""


@dataclass(frozen=True, slots=True)
class Warehouse:
    code: str
    name: str
    city: str
    is_default: bool


@dataclass(frozen=True, slots=True)
class WarehouseSummary:
    """A warehouse with its totals: `items` counts the SKUs it carries, `units_on_hand` sums their on-hand units."""

    code: str
    name: str
    city: str
    is_default: bool
    items: int
    units_on_hand: int

    @property
    def warehouse(self) -> Warehouse:
        return Warehouse(self.code, self.name, self.city, self.is_default)


@dataclass(frozen=True, slots=True)
class Item:
    sku: str
    name: str
    category: str
    unit: str
    unit_cost_cents: int
    reorder_point: int
    supplier_email: str
    supplier_cost_cents: int
    internal_notes: str


@dataclass(frozen=True, slots=True)
class StockRow:
    """One item in one warehouse: the item's fields, its stock figures and the figures derived from them.

    `available = on_hand - reserved`; `stock_value_cents = on_hand * unit_cost_cents`;
    `low_stock` is `available < reorder_point`.
    """

    warehouse: str
    sku: str
    name: str
    category: str
    unit: str
    unit_cost_cents: int
    reorder_point: int
    supplier_email: str
    supplier_cost_cents: int
    internal_notes: str
    on_hand: int
    reserved: int
    available: int
    stock_value_cents: int
    low_stock: bool


@dataclass(frozen=True, slots=True)
class Movement:
    """One recorded change of a warehouse's on-hand quantity of an item (`delta` is never 0)."""

    id: int
    at: datetime
    warehouse: str
    sku: str
    delta: int
    reason: str
    actor: Actor
    on_hand_after: int


@dataclass(frozen=True, slots=True)
class Transfer:
    """The result of moving stock between warehouses: both rows after the move and its two movements."""

    sku: str
    quantity: int
    source: StockRow
    destination: StockRow
    movements: tuple[Movement, Movement]


@dataclass(frozen=True, slots=True)
class WarehouseKpis:
    warehouse: str
    items: int
    units_on_hand: int
    stock_value_cents: int
    low_stock: int


@dataclass(frozen=True, slots=True)
class ReportRow:
    """Totals of one group: `items` counts distinct SKUs, `low_stock` counts stock rows below their reorder point."""

    group: str
    items: int
    units_on_hand: int
    stock_value_cents: int
    low_stock: int


@dataclass(frozen=True, slots=True)
class StockFilter:
    """Which stock rows a list shows, as `InventoryStore.list_stock` filters them."""

    search: str | None = None
    category: str | None = None
    low_stock_only: bool = False

    def shows(self, row: StockRow) -> bool:
        """Whether the filters let `row` through (as `InventoryStore.list_stock` filters)."""
        needle = (self.search or "").casefold()
        if needle and needle not in row.sku.casefold() and needle not in row.name.casefold():
            return False
        if self.category is not None and row.category.casefold() != self.category.casefold():
            return False
        return row.low_stock or not self.low_stock_only


@dataclass(frozen=True, slots=True)
class Overview:
    """What a view of one warehouse shows, read at once (`InventoryStore.overview`): the store's version when it was
    read, the stock rows its filters let through, its category report (every category, 0 where it stocks nothing), its
    newest movements, and the selected item's row and newest movements (none without a selection)."""

    warehouse: str
    version: int
    rows: tuple[StockRow, ...]
    categories: tuple[ReportRow, ...]
    movements: tuple[Movement, ...]
    selected: StockRow | None = None
    history: tuple[Movement, ...] = ()

    @property
    def category_names(self) -> tuple[str, ...]:
        """Every category, as `InventoryStore.list_categories` lists them (the report has one row for each)."""
        return tuple(row.group for row in self.categories)

    @property
    def kpis(self) -> WarehouseKpis:
        """The warehouse's totals, as `InventoryStore.warehouse_kpis` reads them: each stocked SKU is in one category,
        so they are the sums of the category report."""
        rows = self.categories
        return WarehouseKpis(
            self.warehouse,
            sum(row.items for row in rows),
            sum(row.units_on_hand for row in rows),
            sum(row.stock_value_cents for row in rows),
            sum(row.low_stock for row in rows),
        )


class InventoryError(Exception):
    """Base of the domain errors; `code` is stable and safe to show to agents."""

    code: str = "INVENTORY_ERROR"


class UnknownWarehouse(InventoryError):
    code = "UNKNOWN_WAREHOUSE"

    def __init__(self, warehouse: str) -> None:
        self.warehouse = warehouse
        super().__init__(f"There is no warehouse with the code {warehouse!r}; use one of the listed warehouse codes.")


class UnknownSku(InventoryError):
    code = "UNKNOWN_SKU"

    def __init__(self, sku: str) -> None:
        self.sku = sku
        super().__init__(f"There is no item with the SKU {sku!r}; search the stock list for the right SKU.")


class InsufficientStock(InventoryError):
    """Taking `requested` units would leave less than nothing available (reserved units cannot be taken)."""

    code = "INSUFFICIENT_STOCK"

    def __init__(self, sku: str, warehouse: str, available: int, requested: int) -> None:
        self.sku = sku
        self.warehouse = warehouse
        self.available = available
        self.requested = requested
        super().__init__(
            f"Only {available} unit(s) of {sku!r} are available in {warehouse!r}, but {requested} were requested;"
            f" take at most {available}."
        )


class InvalidRequest(InventoryError, ValueError):
    """An argument that breaks a rule before any data is looked at (bad delta, reason, actor, sort, limit)."""

    code = "INVALID_REQUEST"


def field_values(value: Movement | StockRow | ReportRow | WarehouseKpis | WarehouseSummary) -> dict[str, Any]:
    """A value's fields as a dict of the values themselves: they are immutable, and `dataclasses.asdict` deep-copies
    each (a movement's datetime, ~25 µs)."""
    return {field.name: getattr(value, field.name) for field in fields(value)}


def category_order(category: str) -> tuple[str, str]:
    """Where the store's category report places `category`: by its case-folded name, then by its name (the SQL's
    `ORDER BY inventory_fold(category), category`; Postgres folds with ICU's lower case, which keeps a few letters
    such as ß that case folding changes)."""
    return category.casefold(), category


def norm_code(value: str) -> str:
    """Warehouse codes and SKUs are upper case; callers may type them in any case and with stray spaces."""
    return value.strip().upper()


def check_quantity(name: str, value: object, *, signed: bool) -> int:
    """A whole number of units: non-zero when `signed` (a delta), else positive; at most MAX_QUANTITY either way."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"{name} must be a whole number of units, got {value!r}.")
    if value == 0 or (value < 0 and not signed) or abs(value) > MAX_QUANTITY:
        rule = "a non-zero whole number" if signed else "a positive whole number"
        raise InvalidRequest(f"{name} must be {rule} of at most {MAX_QUANTITY} in size, got {value!r}.")
    return value


def check_reason(reason: object) -> str:
    text = reason.strip() if isinstance(reason, str) else ""
    if not 1 <= len(text) <= MAX_REASON_LENGTH:
        raise InvalidRequest(
            f"reason must be 1 to {MAX_REASON_LENGTH} characters saying why the stock changed, got {reason!r}."
        )
    return text


def check_actor(actor: object) -> Actor:
    if actor == "agent":
        return "agent"
    if actor == "person":
        return "person"
    raise InvalidRequest(f"actor must be 'agent' or 'person', got {actor!r}.")


def check_limit(limit: object, maximum: int = 500) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= maximum:
        raise InvalidRequest(f"limit must be a whole number from 1 to {maximum}, got {limit!r}.")
    return limit
