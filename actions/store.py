"""The inventory store: the `InventoryStore` interface and its SQL implementation (SQLite or Postgres).

Every change is one write transaction that reads and writes inside it; after the commit the store publishes what
changed in each warehouse to the app events (`actions.changes`). A change made for an agent's call hands its result
to `record` inside that transaction (the framework's stored outcome of the call, `ctx.outcome`): a retry of the call
gets that outcome instead of booking again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from actions import queries
from actions.changes import WarehouseChange, topic
from actions.demo_data import demo_data
from actions.domain import (
    Actor,
    InsufficientStock,
    Item,
    Movement,
    Overview,
    ReportGrouping,
    ReportRow,
    StockFilter,
    StockRow,
    StockSort,
    Transfer,
    UnknownSku,
    UnknownWarehouse,
    Warehouse,
    WarehouseKpis,
    WarehouseSummary,
    check_actor,
    check_limit,
    check_quantity,
    check_reason,
    norm_code,
)
from actions.queries import stamp
from actions.schema import LOCK, connect, migrate
from webapp import AppEvents, Database

__all__ = ["InventoryStore", "Record", "SqlInventoryStore"]

T = TypeVar("T")
Record = Callable[[Database, T], None]
"""`record(db, value)`: called inside a change's write transaction with what the change returns (an agent's call
keeps it as its outcome there); raising rolls the change back."""

_log = logging.getLogger(__name__)


class InventoryStore(Protocol):
    """What the product needs from an inventory database. Codes and SKUs are matched case-insensitively."""

    def list_warehouses(self) -> tuple[WarehouseSummary, ...]: ...  # the default first (`default_warehouse`'s)
    def default_warehouse(self) -> Warehouse: ...
    def get_warehouse(self, code: str) -> Warehouse: ...
    def get_item(self, sku: str) -> Item: ...
    def list_categories(self) -> tuple[str, ...]: ...
    def list_stock(
        self,
        warehouse: str,
        *,
        search: str | None = None,
        category: str | None = None,
        low_stock_only: bool = False,
        sort: StockSort = "sku",
        descending: bool = False,
    ) -> tuple[StockRow, ...]: ...
    def get_stock(self, sku: str, warehouse: str) -> StockRow: ...
    def adjust_stock(
        self, sku: str, warehouse: str, delta: int, *, reason: str, actor: Actor, record: Record[StockRow] | None = None
    ) -> StockRow: ...
    def transfer_stock(
        self,
        sku: str,
        from_warehouse: str,
        to_warehouse: str,
        quantity: int,
        *,
        actor: Actor,
        reason: str | None = None,
        record: Record[Transfer] | None = None,
    ) -> Transfer: ...
    def recent_movements(self, warehouse: str, *, sku: str | None = None, limit: int = 20) -> tuple[Movement, ...]: ...
    def warehouse_kpis(self, warehouse: str) -> WarehouseKpis: ...
    def report(self, group_by: ReportGrouping, *, warehouse: str | None = None) -> tuple[ReportRow, ...]: ...
    def overview(
        self, warehouse: Warehouse, filters: StockFilter, *, selected: str | None, movements: int, history: int
    ) -> Overview:
        """What a view of `warehouse` (the caller's read of it: not read again) shows, read at once: the version first
        (a change committed meanwhile is newer), the rows `list_stock` lists, the category report, the newest
        `movements`, and with `selected` that item's row (`get_stock`) and newest `history`."""
        ...

    def version(self) -> int:
        """The id of the newest movement (0 before the first): what a change's `version` is compared with."""
        ...

    @property
    def events(self) -> AppEvents:
        """Where committed changes are published (`actions.changes`: one topic per warehouse)."""
        ...

    def close(self) -> None: ...


class SqlInventoryStore:
    """`InventoryStore` on a SQLite file or a Postgres database (`target`: a path or a `postgresql://` URL),
    created, migrated and (when empty) seeded with demo data on open.

    One connection per store: the product calls the store synchronously from one event loop, so one connection
    is never contended and saves an open per call. A lock still serialises its use in case a caller hands work
    to threads. Other connections to the same database (another store, another worker, a restart) are kept correct
    by the write transactions, which the engine serialises (`Database.transaction`).
    """

    def __init__(
        self,
        target: str | Path,
        *,
        seed_demo: bool = True,
        clock: Callable[[], datetime] | None = None,
        events: AppEvents | None = None,
    ) -> None:
        self._clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._events = events if events is not None else AppEvents()
        self._conn = connect(target)
        try:
            migrate(self._conn)
            self.seeded = self._seed_if_empty() if seed_demo else False
        except BaseException:
            self._conn.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _seed_if_empty(self) -> bool:
        with self._lock, self._conn.transaction(LOCK) as conn:
            if conn.execute(queries.ANY_DATA).fetchone()[0]:
                return False
            data = demo_data(self._clock())
            conn.executemany(
                queries.INSERT_WAREHOUSE, [(w.code, w.name, w.city, int(w.is_default)) for w in data.warehouses]
            )
            conn.executemany(queries.INSERT_ITEM, [queries.item_params(item) for item in data.items])
            conn.executemany(queries.INSERT_STOCK, [(s.warehouse, s.sku, s.on_hand, s.reserved) for s in data.stock])
            conn.executemany(
                queries.INSERT_MOVEMENT,
                [
                    (stamp(m.at), m.warehouse, m.sku, m.delta, m.reason, m.actor, m.on_hand_after)
                    for m in data.movements
                ],
            )
        return True

    # -- reads ---------------------------------------------------------------------------------------------------

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def list_warehouses(self) -> tuple[WarehouseSummary, ...]:
        return tuple(WarehouseSummary(c, n, t, bool(d), i, u) for c, n, t, d, i, u in self._all(queries.WAREHOUSES))

    def default_warehouse(self) -> Warehouse:
        rows = self._all(queries.DEFAULT_WAREHOUSE)
        if not rows:
            raise UnknownWarehouse("")
        return queries.warehouse(rows[0])

    def get_warehouse(self, code: str) -> Warehouse:
        rows = self._all(queries.WAREHOUSE, (norm_code(code),))
        if not rows:
            raise UnknownWarehouse(code)
        return queries.warehouse(rows[0])

    def get_item(self, sku: str) -> Item:
        rows = self._all(queries.ITEM, (norm_code(sku),))
        if not rows:
            raise UnknownSku(sku)
        return Item(*rows[0])

    def list_categories(self) -> tuple[str, ...]:
        return tuple(row[0] for row in self._all(queries.CATEGORIES))

    def list_stock(
        self,
        warehouse: str,
        *,
        search: str | None = None,
        category: str | None = None,
        low_stock_only: bool = False,
        sort: StockSort = "sku",
        descending: bool = False,
    ) -> tuple[StockRow, ...]:
        sql, params = queries.stock_list(norm_code(warehouse), search, category, low_stock_only, sort, descending)
        with self._lock:
            self._require_warehouse(self._conn, warehouse)
            rows = self._conn.execute(sql, params).fetchall()
        return tuple(queries.stock_row(row) for row in rows)

    def get_stock(self, sku: str, warehouse: str) -> StockRow:
        with self._lock:
            return self._stock_row(self._conn, sku, warehouse)

    def recent_movements(self, warehouse: str, *, sku: str | None = None, limit: int = 20) -> tuple[Movement, ...]:
        limit = check_limit(limit)
        with self._lock:
            self._require_warehouse(self._conn, warehouse)
            if sku is None:
                rows = self._conn.execute(queries.MOVEMENTS, (norm_code(warehouse), limit)).fetchall()
            else:
                self._require_sku(self._conn, sku)
                params = (norm_code(warehouse), norm_code(sku), limit)
                rows = self._conn.execute(queries.ITEM_MOVEMENTS, params).fetchall()
        return tuple(queries.movement(row) for row in rows)

    def warehouse_kpis(self, warehouse: str) -> WarehouseKpis:
        with self._lock:
            return self._kpis(self._conn, warehouse)

    def report(self, group_by: ReportGrouping, *, warehouse: str | None = None) -> tuple[ReportRow, ...]:
        with self._lock:
            return self._report(self._conn, group_by, warehouse)

    def overview(
        self, warehouse: Warehouse, filters: StockFilter, *, selected: str | None, movements: int, history: int
    ) -> Overview:
        code, movements, history = norm_code(warehouse.code), check_limit(movements), check_limit(history)
        search, category, low_only = filters.search, filters.category, filters.low_stock_only
        rows_sql, rows_params = queries.stock_list(code, search, category, low_only, "sku", False)
        report_sql, report_params = queries.report("category", code)
        with self._lock:
            conn = self._conn
            version = int(conn.execute(queries.NEWEST_MOVEMENT).fetchone()[0])
            rows = tuple(map(queries.stock_row, conn.execute(rows_sql, rows_params).fetchall()))
            report = tuple(ReportRow(*row) for row in conn.execute(report_sql, report_params).fetchall())
            newest = tuple(map(queries.movement, conn.execute(queries.MOVEMENTS, (code, movements)).fetchall()))
            if selected is None:
                return Overview(code, version, rows, report, newest)
            item = self._stock_row(conn, selected, code, checked=True)  # an unknown item raises UnknownSku here
            params = (code, norm_code(selected), history)
            past = tuple(map(queries.movement, conn.execute(queries.ITEM_MOVEMENTS, params).fetchall()))
        return Overview(code, version, rows, report, newest, item, past)

    def version(self) -> int:
        with self._lock:
            return int(self._conn.execute(queries.NEWEST_MOVEMENT).fetchone()[0])

    # -- changes -------------------------------------------------------------------------------------------------

    def adjust_stock(
        self, sku: str, warehouse: str, delta: int, *, reason: str, actor: Actor, record: Record[StockRow] | None = None
    ) -> StockRow:
        delta = check_quantity("delta", delta, signed=True)
        reason, actor = check_reason(reason), check_actor(actor)
        at = self._clock()
        with self._lock, self._conn.transaction(LOCK) as conn:
            before = self._stock_row(conn, sku, warehouse)
            moved = self._apply(conn, before, delta, reason, actor, at)
            after = self._stock_row(conn, sku, warehouse)
            if record is not None:
                record(conn, after)
            changes = self._changes(conn, actor, (after,), (moved,))
        self._publish(changes)
        return after

    def transfer_stock(
        self,
        sku: str,
        from_warehouse: str,
        to_warehouse: str,
        quantity: int,
        *,
        actor: Actor,
        reason: str | None = None,
        record: Record[Transfer] | None = None,
    ) -> Transfer:
        quantity = check_quantity("quantity", quantity, signed=False)
        actor = check_actor(actor)
        source, destination = norm_code(from_warehouse), norm_code(to_warehouse)
        queries.check_distinct(source, destination)
        text = check_reason(reason) if reason is not None else f"Transfer {source} → {destination}"
        at = self._clock()
        with self._lock, self._conn.transaction(LOCK) as conn:
            src = self._stock_row(conn, sku, from_warehouse)
            dst = self._stock_row(conn, sku, to_warehouse)
            out = self._apply(conn, src, -quantity, text, actor, at)
            into = self._apply(conn, dst, quantity, text, actor, at)
            src, dst = self._stock_row(conn, sku, source), self._stock_row(conn, sku, destination)
            moved = Transfer(src.sku, quantity, src, dst, (out, into))
            if record is not None:
                record(conn, moved)
            changes = self._changes(conn, actor, (src, dst), (out, into))
        self._publish(changes)
        return moved

    @property
    def events(self) -> AppEvents:
        return self._events

    def _changes(
        self, conn: Database, actor: Actor, rows: Sequence[StockRow], movements: Sequence[Movement]
    ) -> list[WarehouseChange]:
        """Inside the write transaction: each changed warehouse's KPIs and the totals of the categories its changed
        rows belong to, as of this change (writes are serialised, so the version, the newest movement's id, orders
        changes as they were committed, on every worker)."""
        changes: list[WarehouseChange] = []
        for code in dict.fromkeys(row.warehouse for row in rows):
            if not self._events.watched(topic(code)):
                continue  # no view shows this warehouse, on any worker: nothing to read
            changed = tuple(row for row in rows if row.warehouse == code)
            try:
                changes.append(
                    WarehouseChange(
                        warehouse=code,
                        actor=actor,
                        version=max(m.id for m in movements),
                        rows=changed,
                        movements=tuple(m for m in movements if m.warehouse == code),
                        kpis=self._kpis(conn, code),
                        touched_categories=self._category_totals(conn, code, changed),
                    )
                )
            except Exception:  # the change itself must commit: a failed notification never turns it into an error
                _log.exception("Reading an inventory change for its views failed")
        return changes

    def _publish(self, changes: Sequence[WarehouseChange]) -> None:
        """After the commit: hand each change to the views of its warehouse."""
        for change in changes:
            try:
                self._events.publish(topic(change.warehouse), change.to_json())
            except Exception:  # the change is committed; a failed notification must not turn it into an error
                _log.exception("Publishing an inventory change failed")

    # -- helpers (callers hold the lock) --------------------------------------------------------------------------

    def _kpis(self, conn: Database, warehouse: str) -> WarehouseKpis:
        self._require_warehouse(conn, warehouse)
        items, units, value, low = conn.execute(queries.KPIS, (norm_code(warehouse),)).fetchone()
        return WarehouseKpis(norm_code(warehouse), items, units, value, low)

    def _report(self, conn: Database, group_by: ReportGrouping, warehouse: str | None) -> tuple[ReportRow, ...]:
        sql, params = queries.report(group_by, None if warehouse is None else norm_code(warehouse))
        if warehouse is not None:
            self._require_warehouse(conn, warehouse)
        return tuple(ReportRow(*row) for row in conn.execute(sql, params).fetchall())

    @staticmethod
    def _category_totals(conn: Database, warehouse: str, rows: Sequence[StockRow]) -> tuple[ReportRow, ...]:
        """The warehouse's totals of the categories `rows` belong to (the warehouse is known to exist)."""
        sql, params = queries.category_totals(norm_code(warehouse), sorted({row.category for row in rows}))
        return tuple(ReportRow(*row) for row in conn.execute(sql, params).fetchall())

    @staticmethod
    def _require_warehouse(conn: Database, code: str) -> None:
        if conn.execute(queries.WAREHOUSE, (norm_code(code),)).fetchone() is None:
            raise UnknownWarehouse(code)

    @staticmethod
    def _require_sku(conn: Database, sku: str) -> None:
        if conn.execute(queries.ITEM, (norm_code(sku),)).fetchone() is None:
            raise UnknownSku(sku)

    def _stock_row(self, conn: Database, sku: str, warehouse: str, *, checked: bool = False) -> StockRow:
        """The item's row in the warehouse; an item the warehouse does not carry yet has a row of zeros. `checked`: the
        caller has read the warehouse already."""
        if not checked:
            self._require_warehouse(conn, warehouse)
        row = conn.execute(queries.STOCK_ROW, (norm_code(warehouse), norm_code(warehouse), norm_code(sku))).fetchone()
        if row is None:
            raise UnknownSku(sku)
        return queries.stock_row(row)

    @staticmethod
    def _apply(conn: Database, row: StockRow, delta: int, reason: str, actor: Actor, at: datetime) -> Movement:
        if delta < 0 and -delta > row.available:
            raise InsufficientStock(row.sku, row.warehouse, row.available, -delta)
        on_hand = row.on_hand + delta
        conn.execute(queries.UPSERT_ON_HAND, (row.warehouse, row.sku, on_hand))
        params = (stamp(at), row.warehouse, row.sku, delta, reason, actor, on_hand)
        (movement_id,) = conn.execute(queries.BOOK_MOVEMENT, params).fetchone()
        return Movement(movement_id, at.astimezone(UTC), row.warehouse, row.sku, delta, reason, actor, on_hand)
