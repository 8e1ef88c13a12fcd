"""The SQLite schema of the inventory (tables prefixed `inventory_`) and its migrations.

The database file is shared with the framework's `webapp_` tables, so the schema version lives in our own
`inventory_schema` table rather than in `PRAGMA user_version`, which the framework may claim.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["SCHEMA_VERSION", "connect", "migrate", "transaction"]

# Each migration is a tuple of single statements (executescript would commit the surrounding transaction).
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE inventory_warehouses (
            code TEXT PRIMARY KEY CHECK (length(code) BETWEEN 2 AND 8 AND code = upper(code)),
            name TEXT NOT NULL CHECK (length(name) > 0),
            city TEXT NOT NULL,
            is_default INTEGER NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1))
        ) STRICT""",
        "CREATE UNIQUE INDEX inventory_one_default_warehouse ON inventory_warehouses (is_default) WHERE is_default = 1",
        """CREATE TABLE inventory_items (
            sku TEXT PRIMARY KEY CHECK (length(sku) BETWEEN 1 AND 32 AND sku = upper(sku)),
            name TEXT NOT NULL CHECK (length(name) > 0),
            category TEXT NOT NULL CHECK (length(category) > 0),
            unit TEXT NOT NULL CHECK (length(unit) > 0),
            unit_cost_cents INTEGER NOT NULL CHECK (unit_cost_cents >= 0),
            reorder_point INTEGER NOT NULL CHECK (reorder_point >= 0),
            supplier_email TEXT NOT NULL,
            supplier_cost_cents INTEGER NOT NULL CHECK (supplier_cost_cents >= 0),
            internal_notes TEXT NOT NULL DEFAULT ''
        ) STRICT""",
        """CREATE TABLE inventory_stock (
            warehouse TEXT NOT NULL REFERENCES inventory_warehouses (code),
            sku TEXT NOT NULL REFERENCES inventory_items (sku),
            on_hand INTEGER NOT NULL CHECK (on_hand >= 0),
            reserved INTEGER NOT NULL DEFAULT 0 CHECK (reserved >= 0 AND reserved <= on_hand),
            PRIMARY KEY (warehouse, sku)
        ) STRICT, WITHOUT ROWID""",
        """CREATE TABLE inventory_movements (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            warehouse TEXT NOT NULL REFERENCES inventory_warehouses (code),
            sku TEXT NOT NULL REFERENCES inventory_items (sku),
            delta INTEGER NOT NULL CHECK (delta <> 0),
            reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 200),
            actor TEXT NOT NULL CHECK (actor IN ('agent', 'person')),
            on_hand_after INTEGER NOT NULL CHECK (on_hand_after >= 0)
        ) STRICT""",
        "CREATE INDEX inventory_movements_by_warehouse ON inventory_movements (warehouse, at, id)",
        "CREATE INDEX inventory_movements_by_item ON inventory_movements (warehouse, sku, at, id)",
    ),
)

SCHEMA_VERSION = len(_MIGRATIONS)

_BUSY_TIMEOUT_MS = 5_000


def _fold(value: object) -> str | None:
    """Unicode-aware case folding for SQL (SQLite's own lower() and LIKE only fold ASCII)."""
    return value.casefold() if isinstance(value, str) else None


def connect(path: str | Path) -> sqlite3.Connection:
    """Open a connection in autocommit mode (we issue BEGIN IMMEDIATE ourselves), in WAL, with foreign keys on."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=_BUSY_TIMEOUT_MS / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.create_function("inventory_fold", 1, _fold, deterministic=True)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Generator[sqlite3.Connection]:
    """One write transaction: BEGIN IMMEDIATE takes the write lock up front, so reads inside it stay current."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to SCHEMA_VERSION in one transaction; returns the version found before."""
    with transaction(conn):
        conn.execute("CREATE TABLE IF NOT EXISTS inventory_schema (version INTEGER NOT NULL) STRICT")
        row = conn.execute("SELECT version FROM inventory_schema").fetchone()
        found = 0 if row is None else int(row[0])
        if found > SCHEMA_VERSION:
            raise RuntimeError(
                f"The database has inventory schema version {found}, newer than this program's {SCHEMA_VERSION};"
                " upgrade the program or use another --db file."
            )
        for statements in _MIGRATIONS[found:]:
            for statement in statements:
                conn.execute(statement)
        if row is None:
            conn.execute("INSERT INTO inventory_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        else:
            conn.execute("UPDATE inventory_schema SET version = ?", (SCHEMA_VERSION,))
    return found
