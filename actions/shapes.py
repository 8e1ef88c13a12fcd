"""What the agent sees of the inventory: the output models the Presenters validate against, and the conversions
from domain values. Fields not declared here (supplier cost, internal notes) never reach the agent.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from actions.domain import Movement, ReportRow, StockRow, WarehouseKpis, WarehouseSummary, field_values

__all__ = [
    "CENTS_RULE",
    "LOW_STOCK_RULE",
    "MovementOut",
    "RefreshOut",
    "ReportGroupOut",
    "StockItemOut",
    "TransferOut",
    "WarehouseOut",
    "item_data",
    "movement_data",
    "refresh_data",
    "report_data",
    "warehouse_data",
]

CENTS_RULE = "Every *_cents figure is in CENTS. Divide by 100 for euros (1290 → €12.90)."
LOW_STOCK_RULE = "An item is low on stock when available < reorder_point; suggest a reorder or a transfer."


class StockItemOut(BaseModel):
    """One item in one warehouse, as the agent sees it."""

    model_config = ConfigDict(extra="ignore")

    sku: str
    name: str
    category: str
    unit: str
    on_hand: int = Field(description="Units physically in the warehouse, reserved ones included.")
    reserved: int = Field(description="Units promised to open orders; they cannot be taken or transferred.")
    available: int = Field(description="on_hand minus reserved: the most that can be taken or transferred.")
    reorder_point: int = Field(description="When available falls below this, the item is low on stock.")
    unit_cost_cents: int = Field(description="Cost of one unit in CENTS. Divide by 100.")
    supplier_email: str = Field(description="Redacted: supplier contacts are not shared with assistants.")


class MovementOut(BaseModel):
    """One recorded change of an item's on-hand units."""

    model_config = ConfigDict(extra="ignore")

    at: str
    warehouse: str
    sku: str
    delta: int = Field(description="Units added (positive) or taken (negative).")
    reason: str
    actor: Literal["agent", "person"] = Field(description="Who made the change: an assistant or a person.")
    on_hand_after: int


class ReportGroupOut(BaseModel):
    """Totals of one category or warehouse."""

    model_config = ConfigDict(extra="ignore")

    group: str
    items: int = Field(description="Distinct items (SKUs) in the group.")
    units_on_hand: int
    stock_value_cents: int = Field(description="On-hand units times unit cost, in CENTS. Divide by 100.")
    low_stock: int = Field(description="Stock rows whose available quantity is below the reorder point.")


class WarehouseOut(BaseModel):
    """A warehouse with its totals."""

    model_config = ConfigDict(extra="ignore")

    code: str = Field(description="Pass this as warehouse_code, from_warehouse or to_warehouse.")
    name: str
    city: str
    items: int = Field(description="Distinct items (SKUs) the warehouse carries.")
    units_on_hand: int


class RefreshOut(BaseModel):
    """The figures of the view's warehouse right after the refresh."""

    warehouse: str
    refreshed: bool
    items: int
    units_on_hand: int
    low_stock: int
    stock_value_cents: int


class TransferOut(BaseModel):
    """A transfer that happened: both warehouses' on-hand units after it."""

    sku: str
    from_warehouse: str
    to_warehouse: str
    quantity: int
    from_on_hand: int
    to_on_hand: int


def item_data(row: StockRow, movements: tuple[Movement, ...] | None = None) -> dict[str, Any]:
    """A stock row as a plain dict (every field: the Presenter's schema strips what the agent must not see).

    With `movements`, the dict carries them under `movements` for the Presenter to embed.
    """
    data = field_values(row)
    if movements is not None:
        data["movements"] = [movement_data(m) for m in movements]
    return data


def movement_data(movement: Movement) -> dict[str, Any]:
    data = field_values(movement)
    data["at"] = movement.at.isoformat(timespec="seconds")
    return data


def report_data(rows: tuple[ReportRow, ...]) -> list[dict[str, Any]]:
    return [field_values(row) for row in rows]


def warehouse_data(summary: WarehouseSummary) -> dict[str, Any]:
    return field_values(summary)


def refresh_data(kpis: WarehouseKpis) -> RefreshOut:
    return RefreshOut(
        warehouse=kpis.warehouse,
        refreshed=True,
        items=kpis.items,
        units_on_hand=kpis.units_on_hand,
        low_stock=kpis.low_stock,
        stock_value_cents=kpis.stock_value_cents,
    )
