"""The schema of the inventory (tables prefixed `inventory_`) on SQLite or Postgres, and its migrations.

The database is shared with the framework's `webapp_` tables, so the schema version lives in our own
`inventory_schema` table rather than in `PRAGMA user_version`, which the framework may claim.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from webapp import Database, open_database

__all__ = ["LOCK", "SCHEMA_VERSION", "connect", "migrate"]

LOCK = "inventory"
"""The name that serialises the inventory's write transactions (`Database.transaction`)."""

# Postgres has no user functions in Python: the same Unicode-aware folding, in SQL (ICU's lower case; "C" so that
# sorting by it compares code points, as on SQLite).
_FOLD_FUNCTION = (
    "CREATE FUNCTION inventory_fold(value TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE"
    ' RETURN lower(value COLLATE "und-x-icu") COLLATE "C"'
)

# Each migration is a tuple of single statements (DDL tokens of `Database.ddl`); a mapping is a statement for the
# engines it names only.
_MIGRATIONS: tuple[tuple[str | Mapping[str, str], ...], ...] = (
    (
        {"postgres": _FOLD_FUNCTION},
        """CREATE TABLE inventory_warehouses (
            code {text} PRIMARY KEY CHECK (length(code) BETWEEN 2 AND 8 AND code = upper(code)),
            name {text} NOT NULL CHECK (length(name) > 0),
            city {text} NOT NULL,
            is_default {int} NOT NULL DEFAULT 0 CHECK (is_default IN (0, 1))
        ){strict}""",
        "CREATE UNIQUE INDEX inventory_one_default_warehouse ON inventory_warehouses (is_default) WHERE is_default = 1",
        """CREATE TABLE inventory_items (
            sku {text} PRIMARY KEY CHECK (length(sku) BETWEEN 1 AND 32 AND sku = upper(sku)),
            name {text} NOT NULL CHECK (length(name) > 0),
            category {text} NOT NULL CHECK (length(category) > 0),
            unit {text} NOT NULL CHECK (length(unit) > 0),
            unit_cost_cents {int} NOT NULL CHECK (unit_cost_cents >= 0),
            reorder_point {int} NOT NULL CHECK (reorder_point >= 0),
            supplier_email {text} NOT NULL,
            supplier_cost_cents {int} NOT NULL CHECK (supplier_cost_cents >= 0),
            internal_notes {text} NOT NULL DEFAULT ''
        ){strict}""",
        """CREATE TABLE inventory_stock (
            warehouse {text} NOT NULL REFERENCES inventory_warehouses (code),
            sku {text} NOT NULL REFERENCES inventory_items (sku),
            on_hand {int} NOT NULL CHECK (on_hand >= 0),
            reserved {int} NOT NULL DEFAULT 0 CHECK (reserved >= 0 AND reserved <= on_hand),
            PRIMARY KEY (warehouse, sku)
        ){strict}{without_rowid}""",
        """CREATE TABLE inventory_movements (
            id {id},
            at {text} NOT NULL,
            warehouse {text} NOT NULL REFERENCES inventory_warehouses (code),
            sku {text} NOT NULL REFERENCES inventory_items (sku),
            delta {int} NOT NULL CHECK (delta <> 0),
            reason {text} NOT NULL CHECK (length(reason) BETWEEN 1 AND 200),
            actor {text} NOT NULL CHECK (actor IN ('agent', 'person')),
            on_hand_after {int} NOT NULL CHECK (on_hand_after >= 0)
        ){strict}""",
        "CREATE INDEX inventory_movements_by_warehouse ON inventory_movements (warehouse, at, id)",
        "CREATE INDEX inventory_movements_by_item ON inventory_movements (warehouse, sku, at, id)",
    ),
    (  # the id of the agent's call that booked a movement: a retry of that call finds it instead of booking again
        "ALTER TABLE inventory_movements ADD COLUMN call_id {text} CHECK (length(call_id) BETWEEN 1 AND 64)",
        "CREATE UNIQUE INDEX inventory_movements_by_call ON inventory_movements (call_id, warehouse)"
        " WHERE call_id IS NOT NULL",
    ),
    (  # a retry now gets the framework's stored outcome of the call (`ctx.outcome`), kept in its own table
        "DROP INDEX inventory_movements_by_call",
        "ALTER TABLE inventory_movements DROP COLUMN call_id",
    ),
)
# Indexes that change no schema version: made on every start when missing, so that a worker of the release before,
# which checks the version, still starts on the database (a rolling restart, a rollback).
_INDEXES = (
    # a stock change's category totals (`touched_categories`) read the items of its categories, not every item
    "CREATE INDEX IF NOT EXISTS inventory_items_by_category ON inventory_items (category, sku)",
)

SCHEMA_VERSION = len(_MIGRATIONS)


def _fold(value: object) -> str | None:
    """Unicode-aware case folding for SQL on SQLite (its own lower() and LIKE only fold ASCII)."""
    return value.casefold() if isinstance(value, str) else None


def connect(target: str | Path) -> Database:
    """Connect to the app's database (a SQLite file or a Postgres URL), with `inventory_fold` on SQLite."""
    return open_database(target, sqlite_functions={"inventory_fold": _fold})


def migrate(db: Database) -> int:
    """Bring the schema to SCHEMA_VERSION and make the missing indexes in one transaction; returns the version found
    before."""
    with db.transaction(LOCK):
        db.execute(db.ddl("CREATE TABLE IF NOT EXISTS inventory_schema (version {int} NOT NULL){strict}"))
        row = db.execute("SELECT version FROM inventory_schema").fetchone()
        found = 0 if row is None else int(row[0])
        if found > SCHEMA_VERSION:
            raise RuntimeError(
                f"The database has inventory schema version {found}, newer than this program's {SCHEMA_VERSION};"
                " upgrade the program or use another --db database."
            )
        for statements in _MIGRATIONS[found:]:
            for statement in statements:
                text = statement if isinstance(statement, str) else statement.get(db.dialect)
                if text is not None:
                    db.execute(db.ddl(text))
        for index in _INDEXES:
            db.execute(index)
        if row is None:
            db.execute("INSERT INTO inventory_schema (version) VALUES (?)", (SCHEMA_VERSION,))
        else:
            db.execute("UPDATE inventory_schema SET version = ?", (SCHEMA_VERSION,))
    return found
