"""The inventory store against real databases, SQLite files and Postgres alike: seeding, changes, queries,
constraints, concurrency, and calls that book once however often they are repeated."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from actions import queries
from actions.changes import WarehouseChange, topic
from actions.domain import (
    InsufficientStock,
    InvalidRequest,
    StockFilter,
    UnknownSku,
    UnknownWarehouse,
    field_values,
)
from actions.schema import SCHEMA_VERSION, connect
from actions.store import InventoryStore, SqlInventoryStore
from webapp import AppEvents, Database, Event, open_database

NOW = datetime(2025, 3, 14, 9, 30, tzinfo=UTC)
# what a write that breaks a constraint raises: SQLite's STRICT tables refuse a wrong type as a constraint too
_REFUSED = (sqlite3.IntegrityError, psycopg.errors.IntegrityError, psycopg.errors.InvalidTextRepresentation)


def _open(target: Path | str, **kwargs: Any) -> SqlInventoryStore:
    return SqlInventoryStore(target, clock=lambda: NOW, **kwargs)


@pytest.fixture
def db(database: str) -> str:
    return database


@pytest.fixture
def store(db: str) -> Iterator[SqlInventoryStore]:
    with _open(db) as opened:
        yield opened


def _count(db: str, table: str) -> int:
    with closing(open_database(db)) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def _snapshot(store: InventoryStore) -> tuple[object, ...]:
    codes = [w.code for w in store.list_warehouses()]
    return (
        store.list_warehouses(),
        tuple(store.list_stock(code) for code in codes),
        tuple(store.recent_movements(code, limit=500) for code in codes),
    )


def test_a_new_database_is_seeded_with_three_warehouses_sixty_items_and_low_stock_everywhere(
    store: SqlInventoryStore, db: str
) -> None:
    assert store.seeded
    assert [w.code for w in store.list_warehouses()] == ["BER", "HAM", "MUC"]
    assert store.default_warehouse().code == "BER"
    assert store.get_warehouse("ham").city == "Hamburg"
    assert _count(db, "inventory_items") == 60
    assert len(store.list_categories()) >= 5
    for code in ("BER", "HAM", "MUC"):
        low = store.list_stock(code, low_stock_only=True)
        assert 3 <= len(low) < len(store.list_stock(code))
        assert len(store.recent_movements(code, limit=500)) > 100


def test_seeded_movements_add_up_to_each_rows_on_hand(store: SqlInventoryStore) -> None:
    for code in ("BER", "HAM", "MUC"):
        for row in store.list_stock(code):
            history = store.recent_movements(code, sku=row.sku, limit=500)
            assert sum(m.delta for m in history) == row.on_hand
            assert (history[0].on_hand_after if history else 0) == row.on_hand
            assert 0 <= row.reserved <= row.on_hand


def test_seeding_happens_once_and_a_restart_keeps_every_change(db: str) -> None:
    with _open(db) as first:
        first.adjust_stock("FST-1001", "BER", 7, reason="Goods receipt", actor="person")
        before = _snapshot(first)
    movements = _count(db, "inventory_movements")
    with _open(db) as second:
        assert not second.seeded
        assert _snapshot(second) == before
    assert _count(db, "inventory_movements") == movements


def test_seeding_is_deterministic_for_the_same_clock_on_either_engine(tmp_path: Path, db: str) -> None:
    with _open(tmp_path / "a.db") as a, _open(db) as b:
        assert _snapshot(a) == _snapshot(b)
        for sort in ("name", "category", "stock_value"):
            assert a.list_stock("BER", sort=sort, search="e") == b.list_stock("BER", sort=sort, search="e")
        assert a.list_categories() == b.list_categories()
        assert (a.report("category"), a.report("warehouse")) == (b.report("category"), b.report("warehouse"))


def test_a_store_without_demo_data_starts_empty(db: str) -> None:
    with _open(db, seed_demo=False) as empty:
        assert empty.list_warehouses() == ()
        assert empty.list_categories() == ()
        with pytest.raises(UnknownWarehouse):
            empty.default_warehouse()


def test_two_stores_on_one_file_see_each_others_changes(db: str, store: SqlInventoryStore) -> None:
    with _open(db) as other:
        row = store.adjust_stock("TLS-2001", "MUC", 3, reason="Found in returns", actor="agent")
        assert other.get_stock("TLS-2001", "MUC") == row
        moved = other.transfer_stock("TLS-2001", "MUC", "HAM", 1, actor="person")
        assert store.get_stock("TLS-2001", "HAM") == moved.destination


def test_an_adjustment_returns_the_new_row_and_records_exactly_one_movement(store: SqlInventoryStore, db: str) -> None:
    before = store.get_stock("ELE-4003", "HAM")
    movements = _count(db, "inventory_movements")
    after = store.adjust_stock("ele-4003 ", " ham", -2, reason="  Broken in transit ", actor="person")
    assert (after.on_hand, after.available) == (before.on_hand - 2, before.available - 2)
    assert _count(db, "inventory_movements") == movements + 1
    (latest,) = store.recent_movements("HAM", sku="ELE-4003", limit=1)
    assert (latest.delta, latest.reason, latest.actor, latest.on_hand_after) == (
        -2,
        "Broken in transit",
        "person",
        after.on_hand,
    )
    assert latest.at == NOW


def test_taking_more_than_is_available_raises_and_changes_nothing(store: SqlInventoryStore, db: str) -> None:
    row = next(r for r in store.list_stock("BER") if r.reserved > 0)
    movements = _count(db, "inventory_movements")
    with pytest.raises(InsufficientStock) as caught:
        store.adjust_stock(row.sku, "BER", -(row.available + 1), reason="Pick", actor="agent")
    error = caught.value
    assert (error.sku, error.warehouse, error.available, error.requested) == (
        row.sku,
        "BER",
        row.available,
        row.available + 1,
    )
    assert error.code == "INSUFFICIENT_STOCK"
    assert store.get_stock(row.sku, "BER") == row
    assert _count(db, "inventory_movements") == movements


def test_a_transfer_moves_stock_between_warehouses_with_two_movements(store: SqlInventoryStore) -> None:
    source, target = store.get_stock("SAF-5002", "BER"), store.get_stock("SAF-5002", "MUC")
    moved = store.transfer_stock("SAF-5002", "BER", "MUC", 5, actor="agent")
    assert (moved.source.on_hand, moved.destination.on_hand) == (source.on_hand - 5, target.on_hand + 5)
    assert [(m.warehouse, m.delta) for m in moved.movements] == [("BER", -5), ("MUC", 5)]
    assert store.recent_movements("MUC", sku="SAF-5002", limit=1) == (moved.movements[1],)


def test_a_transfer_into_a_warehouse_that_does_not_carry_the_item_starts_carrying_it(
    store: SqlInventoryStore,
) -> None:
    carried = {r.sku for r in store.list_stock("HAM")}
    sku = next(r.sku for r in store.list_stock("BER") if r.sku not in carried and r.available > 0)
    assert store.get_stock(sku, "HAM").on_hand == 0
    store.transfer_stock(sku, "BER", "HAM", 1, actor="person", reason="Urgent request from Hamburg")
    assert store.get_stock(sku, "HAM").on_hand == 1
    assert store.warehouse_kpis("HAM").items == len(carried) + 1


def test_a_failing_transfer_changes_nothing(store: SqlInventoryStore, db: str) -> None:
    before, movements = _snapshot(store), _count(db, "inventory_movements")
    row = store.get_stock("PWR-3001", "BER")
    with pytest.raises(InsufficientStock):
        store.transfer_stock("PWR-3001", "BER", "HAM", row.available + 1, actor="agent")
    with pytest.raises(UnknownWarehouse):
        store.transfer_stock("PWR-3001", "BER", "XYZ", 1, actor="agent")
    with pytest.raises(InvalidRequest):
        store.transfer_stock("PWR-3001", "BER", "ber", 1, actor="agent")
    assert _snapshot(store) == before
    assert _count(db, "inventory_movements") == movements


def test_unknown_warehouses_and_skus_raise_distinct_errors_carrying_the_value(store: SqlInventoryStore) -> None:
    with pytest.raises(UnknownWarehouse) as warehouse:
        store.list_stock("LON")
    assert warehouse.value.warehouse == "LON" and "'LON'" in str(warehouse.value)
    with pytest.raises(UnknownSku) as sku:
        store.adjust_stock("NOPE-1", "BER", 1, reason="Receipt", actor="person")
    assert sku.value.sku == "NOPE-1"
    for call in (
        lambda: store.get_item("NOPE-1"),
        lambda: store.recent_movements("BER", sku="NOPE-1"),
        lambda: store.get_stock("NOPE-1", "BER"),
    ):
        with pytest.raises(UnknownSku):
            call()
    for call in (lambda: store.warehouse_kpis("LON"), lambda: store.report("category", warehouse="LON")):
        with pytest.raises(UnknownWarehouse):
            call()


@pytest.mark.parametrize(
    ("delta", "reason", "actor"),
    [(0, "Count", "person"), (True, "Count", "person"), (1, "", "person"), (1, "   ", "agent"), (1, "x" * 201, "agent"),
     (1, "Count", "robot"), (2_000_000, "Count", "person")],
)  # fmt: skip
def test_invalid_adjustments_are_refused_before_anything_changes(
    store: SqlInventoryStore, db: str, delta: int, reason: str, actor: str
) -> None:
    movements = _count(db, "inventory_movements")
    with pytest.raises(InvalidRequest):
        store.adjust_stock("FST-1002", "BER", delta, reason=reason, actor=actor)  # type: ignore[arg-type]
    assert _count(db, "inventory_movements") == movements


def test_search_matches_sku_or_name_ignoring_case(store: SqlInventoryStore) -> None:
    assert [r.sku for r in store.list_stock("BER", search="fst-100")] == [f"FST-100{n}" for n in range(1, 9)]
    gloves = store.list_stock("BER", search="GLOVES")
    assert {r.sku for r in gloves} == {"SAF-5002", "SAF-5003"}
    assert [r.sku for r in store.list_stock("BER", search="m8×40")] == ["FST-1001"]
    assert store.list_stock("BER", search="100%") == ()


def test_category_and_low_stock_filters_combine(store: SqlInventoryStore) -> None:
    rows = store.list_stock("MUC", category="safety", low_stock_only=True)
    every = store.list_stock("MUC")
    expected = {r.sku for r in every if r.category == "Safety" and r.available < r.reorder_point}
    assert {r.sku for r in rows} == expected
    assert all(r.low_stock for r in rows)
    assert store.list_stock("MUC", category="No such category") == ()


def test_stock_lists_sort_by_the_chosen_column(store: SqlInventoryStore) -> None:
    rows = store.list_stock("BER", sort="stock_value", descending=True)
    values = [r.stock_value_cents for r in rows]
    assert values == sorted(values, reverse=True)
    names = [r.name.casefold() for r in store.list_stock("BER", sort="name")]
    assert names == sorted(names)
    with pytest.raises(InvalidRequest):
        store.list_stock("BER", sort="price")  # type: ignore[arg-type]


def test_kpis_and_reports_agree_with_the_stock_rows(store: SqlInventoryStore) -> None:
    all_rows = [row for w in store.list_warehouses() for row in store.list_stock(w.code)]
    by_warehouse = {r.group: r for r in store.report("warehouse")}
    for summary in store.list_warehouses():
        rows = [r for r in all_rows if r.warehouse == summary.code]
        kpis = store.warehouse_kpis(summary.code)
        assert kpis.items == summary.items == len(rows) == by_warehouse[summary.code].items
        assert kpis.units_on_hand == summary.units_on_hand == sum(r.on_hand for r in rows)
        assert kpis.stock_value_cents == sum(r.on_hand * r.unit_cost_cents for r in rows)
        assert kpis.low_stock == sum(r.low_stock for r in rows) == by_warehouse[summary.code].low_stock
        assert by_warehouse[summary.code].stock_value_cents == kpis.stock_value_cents
    by_category = store.report("category")
    assert [r.group for r in by_category] == list(store.list_categories())
    assert sum(r.units_on_hand for r in by_category) == sum(r.on_hand for r in all_rows)
    assert sum(r.stock_value_cents for r in by_category) == sum(r.stock_value_cents for r in all_rows)
    assert sum(r.low_stock for r in by_category) == sum(r.low_stock for r in all_rows)
    assert sum(r.items for r in by_category) == len({r.sku for r in all_rows})
    in_ham = store.report("category", warehouse="HAM")
    assert sum(r.items for r in in_ham) == store.warehouse_kpis("HAM").items


def test_an_overview_reads_at_once_what_the_separate_reads_read(store: SqlInventoryStore) -> None:
    store.adjust_stock("FST-1004", "HAM", -1, reason="Picked", actor="person")
    ham = store.get_warehouse("HAM")
    whole = store.overview(ham, StockFilter(), selected=None, movements=12, history=30)
    assert whole.version == store.version()
    assert whole.rows == store.list_stock("HAM")
    assert whole.categories == store.report("category", warehouse="HAM")
    assert whole.category_names == store.list_categories()
    assert whole.kpis == store.warehouse_kpis("HAM")
    assert whole.movements == store.recent_movements("HAM", limit=12)
    assert (whole.selected, whole.history) == (None, ())
    fasteners = StockFilter("fst", "FASTENERS", low_stock_only=True)
    narrow = store.overview(ham, fasteners, selected="fst-1004", movements=12, history=3)
    assert narrow.rows == store.list_stock("HAM", search="fst", category="FASTENERS", low_stock_only=True)
    assert narrow.selected == store.get_stock("FST-1004", "HAM")
    assert narrow.history == store.recent_movements("HAM", sku="FST-1004", limit=3)
    assert narrow.history[0].reason == "Picked"
    with pytest.raises(UnknownSku):
        store.overview(ham, StockFilter(), selected="NOPE-1", movements=12, history=3)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE inventory_stock SET reserved = on_hand + 1 WHERE sku = 'FST-1001' AND warehouse = 'BER'",
        "UPDATE inventory_stock SET on_hand = -1, reserved = 0 WHERE sku = 'FST-1001' AND warehouse = 'BER'",
        "UPDATE inventory_items SET unit_cost_cents = -5 WHERE sku = 'FST-1001'",
        "INSERT INTO inventory_stock (warehouse, sku, on_hand, reserved) VALUES ('LON', 'FST-1001', 1, 0)",
        "INSERT INTO inventory_movements (at, warehouse, sku, delta, reason, actor, on_hand_after)"
        " VALUES ('2025-01-01', 'BER', 'FST-1001', 0, 'x', 'person', 1)",
        "INSERT INTO inventory_movements (at, warehouse, sku, delta, reason, actor, on_hand_after)"
        " VALUES ('2025-01-01', 'BER', 'FST-1001', 1, 'x', 'robot', 1)",
        "UPDATE inventory_stock SET on_hand = 'many' WHERE sku = 'FST-1001' AND warehouse = 'BER'",
    ],
)
def test_constraints_hold_even_against_a_raw_sql_write(store: SqlInventoryStore, db: str, statement: str) -> None:
    before = store.get_stock("FST-1001", "BER")
    with closing(open_database(db)) as conn, pytest.raises(_REFUSED):
        conn.execute(statement)
    assert store.get_stock("FST-1001", "BER") == before


async def test_committed_changes_are_published_per_warehouse_with_their_totals(db: str) -> None:
    events = AppEvents()
    seen: list[tuple[WarehouseChange, int]] = []
    with _open(db, events=events) as store, _open(db) as observer:

        def listener(event: Event) -> None:  # another connection sees the change: it was committed
            assert isinstance(event.payload, dict)
            change = WarehouseChange.from_json(event.payload)
            seen.append((change, observer.get_stock("CLN-8002", change.warehouse).on_hand))
            if change.warehouse == "BER":
                hamburg.deliver_now()  # the transfer's other side, before the next change

        def broken(event: Event) -> None:
            raise RuntimeError("a subscriber bug")

        events.subscribe(topic("BER"), broken)
        berlin, hamburg = events.subscribe(topic("BER"), listener), events.subscribe(topic("HAM"), listener)
        row = store.adjust_stock("CLN-8002", "BER", 4, reason="Receipt", actor="person")
        assert seen == []  # delivered later, on the subscribers' loop
        berlin.deliver_now()
        with pytest.raises(InsufficientStock):
            store.adjust_stock("CLN-8002", "BER", -10_000, reason="Pick", actor="agent")
        moved = store.transfer_stock("CLN-8002", "BER", "HAM", 1, actor="agent")
        berlin.deliver_now()
        berlin.close()
        store.adjust_stock("CLN-8002", "BER", 1, reason="Receipt", actor="person")
        berlin.deliver_now()
        assert [(c.warehouse, c.actor, [r.on_hand for r in c.rows], n) for c, n in seen] == [
            ("BER", "person", [row.on_hand], row.on_hand),
            ("BER", "agent", [moved.source.on_hand], moved.source.on_hand),
            ("HAM", "agent", [moved.destination.on_hand], moved.destination.on_hand),
        ]
        assert seen[2][0].kpis == store.warehouse_kpis("HAM")
        # only the category of the changed row, with the totals the whole report gives it
        hamburg_report = {row.group: row for row in store.report("category", warehouse="HAM")}
        assert seen[2][0].touched_categories == (hamburg_report["Cleaning"],)
        assert [[r.group for r in c.touched_categories] for c, _ in seen] == [["Cleaning"]] * 3
        assert seen[1][0].movements + seen[2][0].movements == moved.movements
        assert all(r.supplier_email == "" and r.internal_notes == "" for c, _ in seen for r in c.rows)


async def test_a_change_from_a_worker_of_the_release_before_reads_its_whole_breakdown_as_touched(db: str) -> None:
    """Old workers published every category's totals as `categories`; new ones read them during a rolling restart."""
    events, seen = AppEvents(), list[Event]()
    with _open(db, events=events) as store:
        subscription = events.subscribe(topic("BER"), seen.append)
        store.adjust_stock("CLN-8002", "BER", 1, reason="Receipt", actor="agent")
        subscription.deliver_now()
        report = store.report("category", warehouse="BER")
    published = seen[0].payload
    assert isinstance(published, dict)
    old = {key: value for key, value in published.items() if key != "touched_categories"}
    old["categories"] = [field_values(row) for row in report]
    assert WarehouseChange.from_json(old).touched_categories == report
    assert WarehouseChange.from_json(published).touched_categories == tuple(r for r in report if r.group == "Cleaning")


def test_a_changes_category_totals_read_the_items_of_its_categories_only(tmp_path: Path) -> None:
    _open(tmp_path / "app.db").close()
    with closing(connect(tmp_path / "app.db")) as conn:  # as the release before left it: the same version, no index
        conn.execute("DROP INDEX inventory_items_by_category")
    _open(tmp_path / "app.db").close()
    sql, params = queries.category_totals("BER", ["Cleaning", "Fasteners"])
    with closing(connect(tmp_path / "app.db")) as conn:
        plan = [str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()]
        assert conn.execute("SELECT version FROM inventory_schema").fetchone()[0] == SCHEMA_VERSION == 3
    assert "SEARCH i USING INDEX inventory_items_by_category (category=?)" in plan, plan
    assert not any(step.startswith(("SCAN i", "SCAN s")) for step in plan), plan


def test_one_hundred_interleaved_adjustments_from_two_stores_all_count(db: str, store: SqlInventoryStore) -> None:
    start = store.get_stock("PKG-6001", "HAM").on_hand
    movements = _count(db, "inventory_movements")
    deltas = [(-1) ** n * (n % 7 + 1) for n in range(100)]
    errors: list[BaseException] = []
    gate = threading.Barrier(4, timeout=10)
    with _open(db) as other:

        def work(worker: int) -> None:
            target = store if worker % 2 else other
            try:
                gate.wait()
                for delta in deltas[worker::4]:
                    target.adjust_stock("PKG-6001", "HAM", delta, reason=f"Worker {worker}", actor="agent")
            except BaseException as error:  # reported by the assertion below
                errors.append(error)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
    assert not errors
    assert not any(thread.is_alive() for thread in threads)
    assert store.get_stock("PKG-6001", "HAM").on_hand == start + sum(deltas)
    assert _count(db, "inventory_movements") == movements + 100


def test_recent_movements_come_newest_first_and_respect_the_limit(store: SqlInventoryStore) -> None:
    store.adjust_stock("FST-1004", "MUC", 1, reason="First", actor="person")
    store.adjust_stock("FST-1005", "MUC", 2, reason="Second", actor="agent")
    latest = store.recent_movements("MUC", limit=2)
    assert [m.reason for m in latest] == ["Second", "First"]
    assert [m.reason for m in store.recent_movements("MUC", sku="FST-1004", limit=1)] == ["First"]
    with pytest.raises(InvalidRequest):
        store.recent_movements("MUC", limit=0)


def test_the_schema_version_is_recorded_and_a_newer_database_is_refused(db: str) -> None:
    _open(db).close()
    with closing(open_database(db)) as conn:
        assert conn.execute("SELECT version FROM inventory_schema").fetchone()[0] == SCHEMA_VERSION
        if conn.dialect == "sqlite":
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute("UPDATE inventory_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(RuntimeError, match="newer"):
        _open(db)


def test_a_change_hands_its_result_to_record_inside_its_transaction(store: SqlInventoryStore, db: str) -> None:
    seen: list[object] = []

    def record(conn: Database, value: object) -> None:  # the change is visible inside its own transaction
        seen.append((value, conn.execute("SELECT COUNT(*) FROM inventory_movements").fetchone()[0]))

    movements = _count(db, "inventory_movements")
    after = store.adjust_stock("TLS-2005", "BER", -2, reason="Pick", actor="agent", record=record)
    moved = store.transfer_stock("SAF-5002", "BER", "MUC", 3, actor="agent", record=record)
    assert seen == [(after, movements + 1), (moved, movements + 3)]


def test_a_record_that_fails_rolls_its_change_back(store: SqlInventoryStore, db: str) -> None:
    before, movements = _snapshot(store), _count(db, "inventory_movements")

    def refuse(conn: Database, value: object) -> None:
        raise LookupError("taken over")

    with pytest.raises(LookupError):
        store.adjust_stock("PLB-7003", "HAM", 5, reason="Receipt", actor="agent", record=refuse)
    with pytest.raises(LookupError):
        store.transfer_stock("PLB-7003", "HAM", "BER", 1, actor="agent", record=refuse)
    assert _snapshot(store) == before and _count(db, "inventory_movements") == movements


def test_a_database_with_the_old_call_id_column_loses_it_in_place_with_its_movements_kept(db: str) -> None:
    _open(db).close()
    with closing(open_database(db)) as conn:  # as version 2 left it: a call id per movement
        conn.execute("ALTER TABLE inventory_movements ADD COLUMN call_id TEXT CHECK (length(call_id) BETWEEN 1 AND 64)")
        conn.execute("CREATE UNIQUE INDEX inventory_movements_by_call ON inventory_movements (call_id, warehouse)")
        conn.execute("UPDATE inventory_movements SET call_id = 'c-' || id")
        conn.execute("UPDATE inventory_schema SET version = 2")
    movements = _count(db, "inventory_movements")
    with _open(db) as store:
        store.adjust_stock("TLS-2005", "BER", 1, reason="Count", actor="agent")
    with closing(open_database(db)) as conn:
        assert conn.execute("SELECT version FROM inventory_schema").fetchone()[0] == SCHEMA_VERSION == 3
        columns_query = (
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'inventory_movements'"
            if db.startswith("postgresql://")
            else "SELECT name FROM pragma_table_info('inventory_movements')"
        )
        assert "call_id" not in [row[0] for row in conn.execute(columns_query).fetchall()]
    assert _count(db, "inventory_movements") == movements + 1


def test_workers_starting_together_on_a_new_database_create_and_seed_it_once(db: str) -> None:
    gate = threading.Barrier(3, timeout=10)
    stores: list[SqlInventoryStore] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            gate.wait()
            stores.append(_open(db))
        except BaseException as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        assert not errors and len(stores) == 3
        assert sorted(store.seeded for store in stores) == [False, False, True]
        assert _count(db, "inventory_items") == 60 and _count(db, "inventory_schema") == 1
    finally:
        for store in stores:
            store.close()
