"""The error envelopes of the inventory tools: each domain error becomes a `tool_error` the agent can act on."""

from __future__ import annotations

from actions.domain import InsufficientStock, InventoryError, UnknownSku, UnknownWarehouse
from webapp import BuiltResult, tool_error

__all__ = ["domain_error", "insufficient_stock", "unknown_sku", "unknown_warehouse"]


def unknown_sku(sku: str) -> BuiltResult:
    return tool_error(
        "NOT_FOUND",
        message=f"No item has the sku '{sku}'.",
        suggestion="Search with inventory_update to find the sku.",
        available_actions=["inventory_update"],
    )


def unknown_warehouse(code: str) -> BuiltResult:
    return tool_error(
        "NOT_FOUND",
        message=f"No warehouse has the code '{code}'.",
        suggestion="List the warehouses with the warehouses tool (action 'list') and use one of their codes.",
        available_actions=["warehouses"],
    )


def insufficient_stock(error: InsufficientStock) -> BuiltResult:
    return tool_error(
        "INSUFFICIENT_STOCK",
        message=(
            f"Only {error.available} unit(s) of {error.sku} are available in {error.warehouse}, "
            f"but {error.requested} were requested. Nothing was changed."
        ),
        suggestion=(
            f"Take at most {error.available}, or move units in from another warehouse with inventory_transfer_stock."
        ),
        available_actions=["inventory_transfer_stock", "inventory_adjust_stock"],
        details={
            "sku": error.sku,
            "warehouse": error.warehouse,
            "available": error.available,
            "requested": error.requested,
        },
    )


def domain_error(error: InventoryError) -> BuiltResult:
    """The envelope for any inventory error (an invalid request keeps the store's message)."""
    if isinstance(error, UnknownSku):
        return unknown_sku(error.sku)
    if isinstance(error, UnknownWarehouse):
        return unknown_warehouse(error.warehouse)
    if isinstance(error, InsufficientStock):
        return insufficient_stock(error)
    return tool_error(error.code, message=str(error), suggestion="Fix the arguments and call the tool again.")
