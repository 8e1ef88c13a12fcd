"""The framework's SQLite file: opening a connection the same way for every framework table, and JSON columns."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import orjson

__all__ = ["FrameworkTable", "dump_json", "load_json", "open_sqlite"]


def open_sqlite(path: str) -> sqlite3.Connection:
    """An autocommit connection in WAL mode; creates the file's folder (`:memory:` stays in memory)."""
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA busy_timeout = 5000")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")  # with WAL: durable across app crashes, no fsync per commit
    return db


class FrameworkTable:
    """A store of one framework table: `open()` connects and runs the `schema` statements, `close()` disconnects."""

    schema: tuple[str, ...] = ()

    def __init__(self, path: Path | str) -> None:
        self._path = str(path)
        self._db: sqlite3.Connection | None = None

    def open(self) -> None:
        """Open the database file and create the table (and its indexes) if they do not exist."""
        if self._db is not None:
            return
        db = open_sqlite(self._path)
        for statement in self.schema:
            db.execute(statement)
        self._db = db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError(f"{type(self).__name__} is not open: call open() first")
        return self._db


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
