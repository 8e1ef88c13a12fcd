"""The inventory's Presenters: how stock rows, items, movements, reports and warehouses answer an agent.

Defined once per entity and shared by every tool that returns it. Supplier e-mails are redacted; supplier costs
and internal notes are stripped by the schemas (`actions.shapes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from actions.shapes import (
    CENTS_RULE,
    LOW_STOCK_RULE,
    MovementOut,
    ReportGroupOut,
    StockItemOut,
    WarehouseOut,
)
from webapp import Presenter, Suggestion, UiBlock, ui

__all__ = [
    "LIST_LIMIT",
    "MOVEMENTS",
    "REPORT",
    "STOCK_ITEM",
    "STOCK_LIST",
    "WAREHOUSES",
]

LIST_LIMIT = 50
_INDIGO, _AMBER, _EMERALD = "#4f46e5", "#d97706", "#059669"


def _euros(cents: int) -> str:
    euros, rest = divmod(abs(cents), 100)
    return f"{'-' if cents < 0 else ''}€{euros:,}.{rest:02d}"


def _is_low(item: dict[str, Any]) -> bool:
    return item["available"] < item["reorder_point"]


# -- movements (embedded into an item) -----------------------------------------------------------------------------


def _movement_ui(movements: list[dict[str, Any]], ctx: Any) -> Iterable[UiBlock | None]:
    if not movements:
        return [ui.summary("No movements recorded for this item in this warehouse yet.")]
    ordered = list(reversed(movements))  # the store gives newest first; charts read left to right
    sku = movements[0]["sku"]
    chart = {
        "tooltip": {"trigger": "axis"},
        "xAxis": {"type": "time"},
        "yAxis": {"type": "value", "name": "on hand", "min": 0},
        "series": [
            {
                "name": "On hand",
                "type": "line",
                "step": "end",
                "data": [[m["at"], m["on_hand_after"]] for m in ordered],
                "itemStyle": {"color": _EMERALD},
                "areaStyle": {"opacity": 0.08},
            }
        ],
    }
    rows = [[m["at"], f"{m['delta']:+d}", m["on_hand_after"], m["actor"], m["reason"]] for m in movements]
    return [
        ui.echarts(chart, title=f"Stock history of {sku}", width="full"),
        ui.table(["at (UTC)", "change", "on hand after", "by", "reason"], rows, title=f"Last movements of {sku}"),
    ]


MOVEMENTS = (
    Presenter("Movement", MovementOut)
    .limit(LIST_LIMIT)
    .collection_ui(_movement_ui)
    .rules(["Movements are listed newest first; on_hand_after is the on-hand figure right after the change."])
)

# -- one item ------------------------------------------------------------------------------------------------------


def _item_ui(item: dict[str, Any], ctx: Any) -> Iterable[UiBlock | None]:
    state = "LOW STOCK" if _is_low(item) else "in stock"
    return [
        ui.summary(
            f"{item['sku']} {item['name']}: {item['on_hand']:,} on hand, {item['available']:,} available "
            f"(reorder at {item['reorder_point']:,}; unit: {item['unit']}), {state}."
        )
    ]


def _item_suggestions(item: dict[str, Any], ctx: Any) -> Iterable[Suggestion | None]:
    if not _is_low(item):
        if getattr(ctx, "tool", None) == "inventory_select_item":
            return []
        return [Suggestion("inventory_select_item", f"Show the movement history of {item['sku']}.")]
    shortfall = item["reorder_point"] - item["available"]
    return [
        Suggestion(
            "inventory_adjust_stock",
            f"{item['sku']} is below its reorder point ({item['available']} < {item['reorder_point']}): book a "
            f"delivery of at least {shortfall} {item['unit']} with a reason.",
        ),
        Suggestion("inventory_transfer_stock", f"Or move {item['sku']} in from a warehouse that has spare units."),
    ]


STOCK_ITEM = (
    Presenter("StockItem", StockItemOut)
    .redact(["supplier_email"])
    .embed("movements", MOVEMENTS)
    .ui(_item_ui)
    .rules([CENTS_RULE, LOW_STOCK_RULE])
    .suggest(_item_suggestions)
)

# -- the stock list ------------------------------------------------------------------------------------------------


def _stock_ui(items: list[dict[str, Any]], ctx: Any) -> Iterable[UiBlock | None]:
    low = [item for item in items if _is_low(item)]
    units = sum(item["on_hand"] for item in items)
    value = sum(item["on_hand"] * item["unit_cost_cents"] for item in items)
    blocks: list[UiBlock | None] = [
        ui.summary(
            f"{len(items)} item(s) listed here: {units:,} units on hand worth {_euros(value)}; {len(low)} low on stock."
        )
    ]
    if low:
        shown = low[:15]
        chart = {
            "tooltip": {"trigger": "axis"},
            "legend": {},
            "xAxis": {"type": "category", "data": [item["sku"] for item in shown]},
            "yAxis": {"type": "value"},
            "series": [
                {"name": "available", "type": "bar", "data": [item["available"] for item in shown], "color": _AMBER},
                {"name": "reorder point", "type": "bar", "data": [i["reorder_point"] for i in shown], "color": _INDIGO},
            ],
        }
        blocks.append(ui.echarts(chart, title="Low-stock items: available vs reorder point", width="full"))
    return blocks


def _stock_suggestions(item: dict[str, Any], ctx: Any) -> Iterable[Suggestion | None]:
    return [
        Suggestion("inventory_select_item", "Highlight one item and get its movement history."),
        Suggestion("inventory_adjust_stock", "Book a delivery, a pick or a correction for one item."),
        Suggestion("inventory_stock_report", "Totals per category or per warehouse, with a chart."),
    ]


STOCK_LIST = (
    Presenter("StockList", StockItemOut)
    .limit(LIST_LIMIT)
    .redact(["supplier_email"])
    .collection_ui(_stock_ui)
    .rules([CENTS_RULE, LOW_STOCK_RULE])
    .suggest(_stock_suggestions)
)

# -- reports -------------------------------------------------------------------------------------------------------


def _report_ui(groups: list[dict[str, Any]], ctx: Any) -> Iterable[UiBlock | None]:
    chart = {
        "tooltip": {"trigger": "axis"},
        "legend": {},
        "xAxis": {"type": "category", "data": [g["group"] for g in groups]},
        "yAxis": [{"type": "value", "name": "units"}, {"type": "value", "name": "value (€)"}],
        "series": [
            {"name": "units on hand", "type": "bar", "data": [g["units_on_hand"] for g in groups], "color": _INDIGO},
            {
                "name": "stock value (€)",
                "type": "bar",
                "yAxisIndex": 1,
                "data": [round(g["stock_value_cents"] / 100, 2) for g in groups],
                "color": _EMERALD,
            },
        ],
    }
    rows = [
        [g["group"], g["items"], f"{g['units_on_hand']:,}", _euros(g["stock_value_cents"]), g["low_stock"]]
        for g in groups
    ]
    units = sum(g["units_on_hand"] for g in groups)
    value = sum(g["stock_value_cents"] for g in groups)
    low = sum(g["low_stock"] for g in groups)
    top = max(groups, key=lambda g: g["stock_value_cents"], default=None)
    lead = f" {top['group']} holds the most value ({_euros(top['stock_value_cents'])})." if top else ""
    return [
        ui.echarts(chart, title="Stock totals per group", width="full"),
        ui.table(["group", "items", "units on hand", "stock value", "low stock"], rows, title="Totals"),
        ui.summary(f"{len(groups)} group(s): {units:,} units worth {_euros(value)}; {low} low-stock row(s).{lead}"),
    ]


def _report_suggestions(group: dict[str, Any], ctx: Any) -> Iterable[Suggestion | None]:
    return [Suggestion("inventory_update", "Set low_stock_only=true to list the items that need reordering.")]


REPORT = (
    Presenter("StockReport", ReportGroupOut).collection_ui(_report_ui).rules([CENTS_RULE]).suggest(_report_suggestions)
)

# -- warehouses ----------------------------------------------------------------------------------------------------


def _warehouse_ui(warehouses: list[dict[str, Any]], ctx: Any) -> Sequence[UiBlock | None]:
    rows = [[w["code"], w["name"], w["city"], w["items"], f"{w['units_on_hand']:,}"] for w in warehouses]
    return [ui.table(["code", "name", "city", "items", "units on hand"], rows, title="Warehouses")]


def _warehouse_suggestions(warehouse: dict[str, Any], ctx: Any) -> Iterable[Suggestion | None]:
    return [Suggestion("inventory", f"Open the stock of a warehouse, e.g. warehouse_code='{warehouse['code']}'.")]


WAREHOUSES = Presenter("Warehouse", WarehouseOut).collection_ui(_warehouse_ui).suggest(_warehouse_suggestions)
