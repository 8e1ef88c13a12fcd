"""The inputs of the inventory tools (pydantic at the trust boundary; unknown fields are refused)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from actions.domain import MAX_QUANTITY, MAX_REASON_LENGTH

__all__ = [
    "AdjustStockInput",
    "InventoryInput",
    "SelectItemInput",
    "StockReportInput",
    "TransferStockInput",
    "WarehouseGetInput",
]

_STRICT = ConfigDict(extra="forbid", str_strip_whitespace=True)
_SKU = Field(min_length=1, max_length=32, description="The item's SKU, e.g. FST-1001 (any case).")
_WAREHOUSE = "A warehouse code, e.g. BER, HAM or MUC (the warehouses tool lists them)."


class InventoryInput(BaseModel):
    """What the inventory view shows. On `inventory_update` only the fields you send change."""

    model_config = _STRICT

    warehouse_code: str = Field(
        "BER", min_length=1, max_length=8, description="Warehouse to show, e.g. BER, HAM or MUC. Default BER."
    )
    search: str | None = Field(
        None, max_length=100, description="Show only items whose SKU or name contains this text (any case)."
    )
    category: str | None = Field(
        None, max_length=60, description="Show only this category, e.g. Fasteners, Safety, Power tools."
    )
    low_stock_only: bool = Field(
        False, description="Show only items whose available quantity is below their reorder point."
    )


class AdjustStockInput(BaseModel):
    model_config = _STRICT

    sku: str = _SKU
    delta: int = Field(
        ge=-MAX_QUANTITY,
        le=MAX_QUANTITY,
        description="Units to add (positive, e.g. a delivery) or take (negative, e.g. a pick). Never 0.",
    )
    reason: str = Field(
        min_length=1, max_length=MAX_REASON_LENGTH, description="Why the stock changes; recorded with the movement."
    )

    @field_validator("delta")
    @classmethod
    def _not_zero(cls, value: int) -> int:
        if value == 0:
            raise PydanticCustomError(
                "non_zero", "delta must not be 0: send a positive number to add units or a negative one to take them."
            )
        return value


class SelectItemInput(BaseModel):
    model_config = _STRICT

    sku: str = _SKU


class StockReportInput(BaseModel):
    model_config = _STRICT

    group_by: Literal["category", "warehouse"] = Field(
        "category",
        description="category: totals per category in the view's warehouse; warehouse: totals per warehouse.",
    )


class TransferStockInput(BaseModel):
    model_config = _STRICT

    sku: str = _SKU
    from_warehouse: str = Field(min_length=1, max_length=8, description=f"Where the units leave. {_WAREHOUSE}")
    to_warehouse: str = Field(min_length=1, max_length=8, description=f"Where the units arrive. {_WAREHOUSE}")
    quantity: int = Field(gt=0, le=MAX_QUANTITY, description="How many available units to move (more than 0).")

    @field_validator("to_warehouse")
    @classmethod
    def _another_warehouse(cls, value: str, info: ValidationInfo) -> str:
        source = info.data.get("from_warehouse")
        if isinstance(source, str) and source.upper() == value.upper():
            raise PydanticCustomError(
                "distinct_warehouses",
                "to_warehouse must differ from from_warehouse: a transfer moves units between two warehouses.",
            )
        return value


class WarehouseGetInput(BaseModel):
    model_config = _STRICT

    code: str = Field(min_length=1, max_length=8, description=_WAREHOUSE)
