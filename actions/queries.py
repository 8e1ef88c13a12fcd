"""The SQL of the inventory store (one text for SQLite and Postgres) and the mapping of its rows to domain values."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from actions.domain import (
    InvalidRequest,
    Item,
    Movement,
    ReportGrouping,
    StockRow,
    StockSort,
    Warehouse,
)

__all__ = [
    "ANY_DATA",
    "BOOK_MOVEMENT",
    "CATEGORIES",
    "DEFAULT_WAREHOUSE",
    "INSERT_ITEM",
    "INSERT_MOVEMENT",
    "INSERT_STOCK",
    "INSERT_WAREHOUSE",
    "ITEM",
    "ITEM_MOVEMENTS",
    "KPIS",
    "MOVEMENTS",
    "STOCK_ROW",
    "UPSERT_ON_HAND",
    "WAREHOUSE",
    "WAREHOUSES",
    "category_totals",
    "check_distinct",
    "item_params",
    "movement",
    "report",
    "stamp",
    "stock_list",
    "stock_row",
    "warehouse",
]

ANY_DATA = "SELECT EXISTS (SELECT 1 FROM inventory_warehouses) OR EXISTS (SELECT 1 FROM inventory_items)"

INSERT_WAREHOUSE = "INSERT INTO inventory_warehouses (code, name, city, is_default) VALUES (?, ?, ?, ?)"
INSERT_ITEM = """INSERT INTO inventory_items (sku, name, category, unit, unit_cost_cents, reorder_point, supplier_email,
    supplier_cost_cents, internal_notes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
INSERT_STOCK = "INSERT INTO inventory_stock (warehouse, sku, on_hand, reserved) VALUES (?, ?, ?, ?)"
INSERT_MOVEMENT = """INSERT INTO inventory_movements (at, warehouse, sku, delta, reason, actor, on_hand_after)
    VALUES (?, ?, ?, ?, ?, ?, ?)"""
BOOK_MOVEMENT = f"{INSERT_MOVEMENT} RETURNING id"
UPSERT_ON_HAND = """INSERT INTO inventory_stock (warehouse, sku, on_hand, reserved) VALUES (?, ?, ?, 0)
    ON CONFLICT (warehouse, sku) DO UPDATE SET on_hand = excluded.on_hand"""


def _sum(expression: str) -> str:
    """A total that is 0 over no rows and an integer on both engines (Postgres sums BIGINTs as NUMERIC)."""
    return f"CAST(COALESCE(SUM({expression}), 0) AS BIGINT)"


WAREHOUSES = f"""SELECT w.code, w.name, w.city, w.is_default, COUNT(s.sku), {_sum("s.on_hand")}
    FROM inventory_warehouses w LEFT JOIN inventory_stock s ON s.warehouse = w.code
    GROUP BY w.code ORDER BY w.is_default DESC, w.code"""
WAREHOUSE = "SELECT code, name, city, is_default FROM inventory_warehouses WHERE code = ?"
DEFAULT_WAREHOUSE = (
    "SELECT code, name, city, is_default FROM inventory_warehouses ORDER BY is_default DESC, code LIMIT 1"
)
ITEM = """SELECT sku, name, category, unit, unit_cost_cents, reorder_point, supplier_email, supplier_cost_cents,
    internal_notes FROM inventory_items WHERE sku = ?"""
CATEGORIES = "SELECT category FROM inventory_items GROUP BY category ORDER BY inventory_fold(category), category"

_ITEM_COLUMNS = """i.sku, i.name, i.category, i.unit, i.unit_cost_cents, i.reorder_point, i.supplier_email,
    i.supplier_cost_cents, i.internal_notes"""
# Parameters: warehouse (selected), warehouse (joined), sku. A warehouse that does not carry the item gets zeros.
STOCK_ROW = f"""SELECT ?, {_ITEM_COLUMNS}, COALESCE(s.on_hand, 0), COALESCE(s.reserved, 0)
    FROM inventory_items i LEFT JOIN inventory_stock s ON s.sku = i.sku AND s.warehouse = ? WHERE i.sku = ?"""
_STOCK_LIST = f"""SELECT s.warehouse, {_ITEM_COLUMNS}, s.on_hand, s.reserved
    FROM inventory_stock s JOIN inventory_items i ON i.sku = s.sku WHERE s.warehouse = ?"""
_LOW = "s.on_hand - s.reserved < i.reorder_point"
_LOW_COUNT = _sum(f"CASE WHEN {_LOW} THEN 1 ELSE 0 END")
KPIS = f"""SELECT COUNT(*), {_sum("s.on_hand")}, {_sum("s.on_hand * i.unit_cost_cents")}, {_LOW_COUNT}
    FROM inventory_stock s JOIN inventory_items i ON i.sku = s.sku WHERE s.warehouse = ?"""

_MOVEMENT_COLUMNS = "id, at, warehouse, sku, delta, reason, actor, on_hand_after"
MOVEMENTS = f"""SELECT {_MOVEMENT_COLUMNS} FROM inventory_movements WHERE warehouse = ?
    ORDER BY at DESC, id DESC LIMIT ?"""
ITEM_MOVEMENTS = f"""SELECT {_MOVEMENT_COLUMNS} FROM inventory_movements WHERE warehouse = ? AND sku = ?
    ORDER BY at DESC, id DESC LIMIT ?"""
NEWEST_MOVEMENT = "SELECT COALESCE(MAX(id), 0) FROM inventory_movements"

_SORTS: dict[str, str] = {
    "sku": "i.sku",
    "name": "inventory_fold(i.name)",
    "category": "inventory_fold(i.category)",
    "on_hand": "s.on_hand",
    "reserved": "s.reserved",
    "available": "s.on_hand - s.reserved",
    "reorder_point": "i.reorder_point",
    "stock_value": "s.on_hand * i.unit_cost_cents",
}

_TOTALS = f"COUNT(DISTINCT s.sku), {_sum('s.on_hand')}, {_sum('s.on_hand * i.unit_cost_cents')}, {_LOW_COUNT}"
_REPORT_BY_CATEGORY = f"""SELECT i.category, {_TOTALS}
    FROM inventory_items i LEFT JOIN inventory_stock s ON s.sku = i.sku {{join}} {{where}}
    GROUP BY i.category ORDER BY inventory_fold(i.category), i.category"""
_REPORT_BY_WAREHOUSE = f"""SELECT w.code, {_TOTALS}
    FROM inventory_warehouses w LEFT JOIN inventory_stock s ON s.warehouse = w.code
    LEFT JOIN inventory_items i ON i.sku = s.sku {{where}}
    GROUP BY w.code ORDER BY w.code"""


def stamp(at: datetime) -> str:
    """Store times as fixed-width UTC ISO text, so text order is time order."""
    if at.tzinfo is None:
        raise ValueError(f"Times must be timezone-aware, got the naive {at!r}; give the clock a tzinfo such as UTC.")
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def check_distinct(source: str, destination: str) -> None:
    if source == destination:
        raise InvalidRequest(f"A transfer needs two different warehouses, got {source!r} twice; pick another target.")


def item_params(item: Item) -> tuple[Any, ...]:
    return (
        item.sku,
        item.name,
        item.category,
        item.unit,
        item.unit_cost_cents,
        item.reorder_point,
        item.supplier_email,
        item.supplier_cost_cents,
        item.internal_notes,
    )


def warehouse(row: tuple[Any, ...]) -> Warehouse:
    code, name, city, is_default = row
    return Warehouse(code, name, city, bool(is_default))


def stock_row(row: tuple[Any, ...]) -> StockRow:
    code, sku, name, category, unit, unit_cost, reorder, email, supplier_cost, notes, on_hand, reserved = row
    available = on_hand - reserved
    return StockRow(
        warehouse=code,
        sku=sku,
        name=name,
        category=category,
        unit=unit,
        unit_cost_cents=unit_cost,
        reorder_point=reorder,
        supplier_email=email,
        supplier_cost_cents=supplier_cost,
        internal_notes=notes,
        on_hand=on_hand,
        reserved=reserved,
        available=available,
        stock_value_cents=on_hand * unit_cost,
        low_stock=available < reorder,
    )


def movement(row: tuple[Any, ...]) -> Movement:
    movement_id, at, warehouse_code, sku, delta, reason, actor, on_hand_after = row
    return Movement(movement_id, datetime.fromisoformat(at), warehouse_code, sku, delta, reason, actor, on_hand_after)


def stock_list(
    warehouse_code: str, search: str | None, category: str | None, low_only: bool, sort: StockSort, descending: bool
) -> tuple[str, list[Any]]:
    """The filtered, sorted stock list of one warehouse (search: sku or name contains, ignoring case)."""
    if sort not in _SORTS:
        raise InvalidRequest(f"sort must be one of {', '.join(_SORTS)}, got {sort!r}.")
    sql, params = _STOCK_LIST, [warehouse_code]
    needle = (search or "").strip().casefold()
    if needle:
        sql += " AND (inventory_fold(i.sku) LIKE ? ESCAPE '!' OR inventory_fold(i.name) LIKE ? ESCAPE '!')"
        pattern = "%" + re.sub(r"([!%_])", r"!\1", needle) + "%"
        params += [pattern, pattern]
    if category is not None and category.strip():
        sql += " AND inventory_fold(i.category) = ?"
        params.append(category.strip().casefold())
    if low_only:
        sql += f" AND {_LOW}"
    direction = "DESC" if descending else "ASC"
    return f"{sql} ORDER BY {_SORTS[sort]} {direction}, i.sku {direction}", params


def report(group_by: ReportGrouping, warehouse_code: str | None) -> tuple[str, list[Any]]:
    """Totals per category or per warehouse, over all warehouses or just one."""
    if group_by == "category":
        join = "" if warehouse_code is None else "AND s.warehouse = ?"
        return _REPORT_BY_CATEGORY.format(join=join, where=""), [] if warehouse_code is None else [warehouse_code]
    if group_by == "warehouse":
        where = "" if warehouse_code is None else "WHERE w.code = ?"
        return _REPORT_BY_WAREHOUSE.format(where=where), [] if warehouse_code is None else [warehouse_code]
    raise InvalidRequest(f"group_by must be 'category' or 'warehouse', got {group_by!r}.")


def category_totals(warehouse_code: str, categories: Sequence[str]) -> tuple[str, list[Any]]:
    """The category report of one warehouse restricted to `categories` (those a change's rows belong to), in the
    report's order."""
    where = f"WHERE i.category IN ({', '.join('?' * len(categories))})"
    return _REPORT_BY_CATEGORY.format(join="AND s.warehouse = ?", where=where), [warehouse_code, *categories]
