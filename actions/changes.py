"""What a committed stock change did to one warehouse, as the store publishes it to the views of that warehouse.

One event per changed warehouse on `topic(code)`: the changed rows, the new movements, the warehouse's KPIs and
the totals of the categories the changed rows belong to (the others did not change), read once in the write
transaction, and its version (the id of its newest movement), so a view that got a newer change, or read the store
after it, ignores an older one that reaches it late. The payload is plain JSON (it may travel between processes) and
leaves out the supplier fields, which no view shows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, cast

from actions.domain import Actor, Movement, ReportRow, StockRow, WarehouseKpis, field_values

__all__ = ["WarehouseChange", "change_from_text", "topic"]

_PRIVATE: dict[str, Any] = {"supplier_email": "", "supplier_cost_cents": 0, "internal_notes": ""}
_ROW_FIELDS = tuple(field.name for field in fields(StockRow) if field.name not in _PRIVATE)


def topic(warehouse: str) -> str:
    """The app-events topic of one warehouse's changes (`warehouse` is a normalised code)."""
    return f"inventory/stock/{warehouse}"


@dataclass(frozen=True, slots=True)
class WarehouseChange:
    """One warehouse's side of a change: rows after it, its movements (newest last), KPIs, and the totals of the
    categories of its rows, in the order of the store's category report."""

    warehouse: str
    actor: Actor
    version: int
    rows: tuple[StockRow, ...]
    movements: tuple[Movement, ...]
    kpis: WarehouseKpis
    touched_categories: tuple[ReportRow, ...]

    def to_json(self) -> dict[str, Any]:
        rows = [{name: getattr(row, name) for name in _ROW_FIELDS} for row in self.rows]  # flat: no deep copies
        movements = [field_values(movement) | {"at": movement.at.isoformat()} for movement in self.movements]
        return {
            "warehouse": self.warehouse,
            "actor": self.actor,
            "version": self.version,
            "rows": rows,
            "movements": movements,
            "kpis": field_values(self.kpis),
            "touched_categories": [field_values(row) for row in self.touched_categories],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WarehouseChange:
        rows = tuple(StockRow(**(_PRIVATE | row)) for row in cast(list[dict[str, Any]], data["rows"]))
        movements = tuple(_movement(movement) for movement in cast(list[dict[str, Any]], data["movements"]))
        return cls(
            warehouse=str(data["warehouse"]),
            actor=data["actor"],
            version=int(data["version"]),
            rows=rows,
            movements=movements,
            kpis=WarehouseKpis(**data["kpis"]),
            touched_categories=tuple(ReportRow(**row) for row in _touched(data)),
        )


def _touched(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A change's category totals; a worker of the release before sent the whole breakdown as `categories` (every
    category's totals: merged, they are as right), so a rolling restart keeps the new workers' views live."""
    totals = data["touched_categories"] if "touched_categories" in data else data["categories"]
    return cast(list[dict[str, Any]], totals)


def _movement(data: dict[str, Any]) -> Movement:
    fields: dict[str, Any] = {**data, "at": datetime.fromisoformat(data["at"])}
    return Movement(**fields)


@functools.lru_cache(maxsize=16)
def change_from_text(text: str) -> WarehouseChange:
    """The change an event's JSON text carries, read once however many views of the warehouse receive it (a change
    is immutable, so they share it)."""
    return WarehouseChange.from_json(json.loads(text))
