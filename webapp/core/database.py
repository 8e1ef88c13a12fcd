"""The framework's tables in the app's database (SQLite or Postgres): opening each the same way, each store's
statements on a thread of its own (off the event loop, within a deadline), JSON columns."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import orjson

from webapp.core.dbthread import DatabaseThread
from webapp.core.sql import STATEMENT_TIMEOUT, Database, DatabaseTimeout, open_database

__all__ = ["FrameworkTable", "dump_json", "load_json", "upsert"]

P = ParamSpec("P")
T = TypeVar("T")
log = logging.getLogger(__name__)
_CONNECT_TIMEOUT = 2  # seconds a framework connection may take to open (libpq's smallest): a reconnect holds the
# store's thread no longer while the database is away


class FrameworkTable:
    """A store of one framework table on a connection of its own, used only from the store's thread (`DatabaseThread`):
    `open()` connects and runs the `schema` statements (DDL with `Database.ddl` tokens) there, `close()` disconnects
    after the statements handed over before. A subclass's methods run their SQL through `_run` (awaited) or `_post`
    (a write handed over without waiting); on Postgres each statement has a `statement_timeout`."""

    schema: tuple[str, ...] = ()

    def __init__(self, target: Path | str) -> None:
        self._target = target
        self._db: Database | None = None
        self._thread = DatabaseThread(type(self).__name__, self._interrupt)

    async def open(self) -> None:
        """Connect to the database and create the table (and its indexes) if they do not exist."""
        await self._run(self._open)

    def _open(self) -> None:
        """On the store's thread: connect, once."""
        if self._db is not None:
            return
        db = open_database(self._target, statement_timeout=STATEMENT_TIMEOUT, connect_timeout=_CONNECT_TIMEOUT)
        try:
            with db.transaction("webapp_schema"):  # workers starting together create each table once
                for statement in self.schema:
                    db.execute(db.ddl(statement))
            self._upgrade(db)
        except BaseException:
            db.close()
            raise
        self._db = db

    def _upgrade(self, db: Database) -> None:
        """On the store's thread, after the schema: bring a table an older version wrote up to date (a subclass's)."""

    async def close(self) -> None:
        """Disconnect once the statements handed over before have run, and end the store's thread."""
        if not self._thread.started:
            return
        try:
            await self._run(self._close)
        except DatabaseTimeout:  # the database stalls: the connection goes with the process
            log.warning("%s could not close its connection: the database does not answer", type(self).__name__)
        finally:
            self._thread.stop()

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    async def flush(self) -> None:
        """Return once the writes handed over before (without waiting) have run or failed."""
        await self._run(_nothing)

    @property
    def is_open(self) -> bool:
        return self._db is not None

    @property
    def _conn(self) -> Database:
        """The connection (on the store's thread only)."""
        if self._db is None:
            raise RuntimeError(f"{type(self).__name__} is not open: call open() first")
        return self._db

    async def _run(self, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`work(*args, **kwargs)` on the store's thread, after everything handed over before; `DatabaseTimeout` past
        the deadline."""
        return await self._thread.run(functools.partial(work, *args, **kwargs))

    def _post(self, what: str, work: Callable[P, object], *args: P.args, **kwargs: P.kwargs) -> None:
        """Hand the write `work(*args, **kwargs)` to the store's thread without waiting (in order with the others); a
        failure is logged, naming `what`."""
        self._thread.post(functools.partial(work, *args, **kwargs), what)

    def _interrupt(self) -> None:
        db = self._db
        if db is not None:
            db.interrupt()


def _nothing() -> None:
    pass


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
