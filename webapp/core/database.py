"""The framework's tables in the app's database (SQLite or Postgres): opening each the same way, JSON columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from webapp.core.sql import Database, open_database

__all__ = ["FrameworkTable", "dump_json", "load_json", "upsert"]


class FrameworkTable:
    """A store of one framework table: `open()` connects and runs the `schema` statements (DDL with
    `Database.ddl` tokens), `close()` disconnects."""

    schema: tuple[str, ...] = ()

    def __init__(self, target: Path | str) -> None:
        self._target = target
        self._db: Database | None = None

    def open(self) -> None:
        """Connect to the database and create the table (and its indexes) if they do not exist."""
        if self._db is not None:
            return
        db = open_database(self._target)
        try:
            with db.transaction("webapp_schema"):  # workers starting together create each table once
                for statement in self.schema:
                    db.execute(db.ddl(statement))
        except BaseException:
            db.close()
            raise
        self._db = db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def is_open(self) -> bool:
        return self._db is not None

    @property
    def _conn(self) -> Database:
        if self._db is None:
            raise RuntimeError(f"{type(self).__name__} is not open: call open() first")
        return self._db


def upsert(table: str, columns: Sequence[str], key: str) -> str:
    """An INSERT that replaces the row with the same `key` (`ON CONFLICT … DO UPDATE`, on both engines)."""
    updates = ", ".join(f"{name} = excluded.{name}" for name in columns if name != key)
    marks = ", ".join("?" * len(columns))
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT ({key}) DO UPDATE SET {updates}"


def dump_json(value: Any) -> str:
    """JSON text for a column (keys kept in order); values orjson refuses (integers beyond 64 bits, very deep
    nesting) go through the standard library, and as a last resort their `repr`, so a record is never lost."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        try:
            return json.dumps(value, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):
            return json.dumps(repr(value)[:1000])


def load_json(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)
