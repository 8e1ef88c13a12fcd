"""Persistence of the call log in the app's database (framework-owned table `webapp_calls`).

Records are stored as the call log made them (secrets already masked), keyed by (worker, seq) so workers sharing
the database never overwrite each other's, pruned by count and age, and loaded back into the log on start.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from webapp.calllog.memory import CallLog, CallRecord
from webapp.core.database import FrameworkTable, dump_json
from webapp.core.sql import Database

__all__ = ["DEFAULT_KEEP", "DEFAULT_MAX_AGE", "CallLogStore"]

DEFAULT_KEEP = 10_000
"""Calls kept in the database by default."""
DEFAULT_MAX_AGE = 30 * 24 * 3600.0
"""Seconds a call is kept in the database by default (30 days)."""

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webapp_calls (
    worker TEXT NOT NULL DEFAULT '',
    seq {int} NOT NULL,
    time {float} NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    blocks TEXT NOT NULL,
    is_error {int} NOT NULL,
    structured TEXT,
    duration_ms {float} NOT NULL,
    principal TEXT,
    session_id TEXT,
    protocol TEXT NOT NULL,
    view TEXT,
    PRIMARY KEY (worker, seq)
)
"""
_INDEX = "CREATE INDEX IF NOT EXISTS webapp_calls_time ON webapp_calls (time)"
_OLD_COLUMNS = (
    "seq, time, tool, arguments, blocks, is_error, structured, duration_ms, principal, session_id, protocol, view"
)
_COLUMNS = f"{_OLD_COLUMNS}, worker"
_UPDATES = ", ".join(f"{name} = excluded.{name}" for name in _OLD_COLUMNS.split(", ")[1:])
_SAVE = (
    f"INSERT INTO webapp_calls ({_COLUMNS}) VALUES ({', '.join('?' * 13)}) "
    f"ON CONFLICT (worker, seq) DO UPDATE SET {_UPDATES}"
)
_NEWEST_FIRST = "ORDER BY time DESC, worker DESC, seq DESC"


def _row(record: CallRecord) -> tuple[Any, ...]:
    return (
        record.seq,
        record.time.timestamp(),
        record.tool,
        dump_json(record.arguments),
        dump_json(list(record.blocks)),
        int(record.is_error),
        None if record.structured_content is None else dump_json(record.structured_content),
        record.duration_ms,
        record.principal,
        record.session_id,
        record.protocol,
        record.view,
        record.worker,
    )


def _record(row: tuple[Any, ...]) -> CallRecord:
    seq, stamp, tool, arguments, blocks, is_error, structured, duration, principal, session, protocol, view, by = row
    return CallRecord(
        seq=int(seq),
        time=datetime.fromtimestamp(float(stamp), UTC),
        tool=str(tool),
        arguments=orjson.loads(arguments),
        blocks=tuple(str(text) for text in orjson.loads(blocks)),
        is_error=bool(is_error),
        structured_content=None if structured is None else orjson.loads(structured),
        duration_ms=float(duration),
        principal=principal,
        session_id=session,
        protocol=str(protocol),
        view=view,
        worker=str(by),
    )


class CallLogStore(FrameworkTable):
    """Reads and writes `webapp_calls` on the store's thread; keeps at most `keep` calls, none older than `max_age`
    seconds.

    Pruning runs on `open()` and after every `prune_every` saves, so the table never grows far past `keep`.
    """

    schema = (_SCHEMA, _INDEX)

    def __init__(
        self,
        path: Path | str,
        *,
        keep: int = DEFAULT_KEEP,
        max_age: float = DEFAULT_MAX_AGE,
        prune_every: int = 100,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if keep < 1 or max_age <= 0 or prune_every < 1:
            raise ValueError(
                f"CallLogStore needs keep >= 1, max_age > 0 and prune_every >= 1; got {keep!r}, {max_age!r}, "
                f"{prune_every!r}"
            )
        super().__init__(path)
        self.keep = keep
        self.max_age = max_age
        self._prune_every = prune_every
        self._clock = clock
        self._unsaved_prunes = 0

    def _upgrade(self, db: Database) -> None:
        """Bring the table up to date (a file written before several workers) and prune it."""
        _add_worker_key(db)
        self._prune(db)

    def save_soon(self, record: CallRecord) -> None:
        """Store one record (replacing a stored one with the same worker and `seq`), handed to the store's thread
        without waiting (in order with the other statements; a failure is logged)."""
        self._post(f"call {record.seq} ({record.tool})", self._save, _row(record))

    async def load(self, limit: int, *, worker: str | None = None) -> list[CallRecord]:
        """The newest `limit` records (of every worker, or of `worker` only), oldest first."""
        where, params = ("", ()) if worker is None else ("WHERE worker = ? ", (worker,))
        query = f"SELECT {_COLUMNS} FROM webapp_calls {where}{_NEWEST_FIRST} LIMIT ?"
        rows = await self._run(self._fetch, query, (*params, max(limit, 0)))
        return [_record(row) for row in reversed(rows)]

    async def count(self) -> int:
        return int((await self._run(self._fetch, "SELECT count(*) FROM webapp_calls", ()))[0][0])

    async def last_seq(self, worker: str = "") -> int:
        """The highest stored `seq` of `worker` (0 when it has none)."""
        query = "SELECT coalesce(max(seq), 0) FROM webapp_calls WHERE worker = ?"
        return int((await self._run(self._fetch, query, (worker,)))[0][0])

    async def prune(self) -> int:
        """Delete the calls older than `max_age` and all but the newest `keep` (of all workers together); how many
        were deleted."""
        return await self._run(lambda: self._prune(self._conn))

    async def attach(self, calllog: CallLog, *, everyone: bool = True) -> Callable[[], None]:
        """Load the newest stored calls (of every worker, or of `calllog`'s own with `everyone=False`) into `calllog`,
        which numbers its new calls after its worker's stored ones, and save every new one; returns a function that
        detaches."""
        mine = calllog.worker
        records = await self.load(calllog.size, worker=None if everyone else mine)
        calllog.restore(records, last_seq=await self.last_seq(mine))

        def persist(record: CallRecord) -> None:
            if not self.is_open:  # a call that outlived the server's drain: it stays in the in-memory log only
                log.warning("call %d (%s) not persisted: the call-log store is closed", record.seq, record.tool)
                return
            self.save_soon(record)

        return calllog.on_record(persist)

    # -- on the store's thread -------------------------------------------------------------------------------------
    def _fetch(self, query: str, params: tuple[Any, ...]) -> list[Any]:
        return self._conn.execute(query, params).fetchall()

    def _save(self, row: tuple[Any, ...]) -> None:
        self._conn.execute(_SAVE, row)
        self._unsaved_prunes += 1
        if self._unsaved_prunes >= self._prune_every:
            self._prune(self._conn)

    def _prune(self, db: Database) -> int:
        self._unsaved_prunes = 0
        old = db.execute("DELETE FROM webapp_calls WHERE time < ?", (self._clock() - self.max_age,)).rowcount
        surplus = db.execute(
            "DELETE FROM webapp_calls WHERE (time, worker, seq) <= "
            f"(SELECT time, worker, seq FROM webapp_calls {_NEWEST_FIRST} LIMIT 1 OFFSET ?)",
            (self.keep,),
        ).rowcount
        return old + surplus


def _add_worker_key(db: Database) -> None:
    """Give a table written before several workers its `worker` column and (worker, seq) key, every row kept (as the
    one process's, worker ""); workers opening it together change it once."""
    with db.transaction("webapp_schema"):
        if _has_worker(db):
            return
        if db.dialect == "postgres":
            key = db.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = 'webapp_calls'::regclass AND contype = 'p'"
            ).fetchone()[0]
            db.execute("ALTER TABLE webapp_calls ADD COLUMN worker TEXT NOT NULL DEFAULT ''")
            db.execute(f'ALTER TABLE webapp_calls DROP CONSTRAINT "{key}"')
            db.execute("ALTER TABLE webapp_calls ADD PRIMARY KEY (worker, seq)")
            return
        # SQLite changes no primary key in place: the rows move into a table of the new shape
        db.execute("ALTER TABLE webapp_calls RENAME TO webapp_calls_v1")
        db.execute(db.ddl(_SCHEMA))
        db.execute(f"INSERT INTO webapp_calls ({_OLD_COLUMNS}) SELECT {_OLD_COLUMNS} FROM webapp_calls_v1")
        db.execute("DROP TABLE webapp_calls_v1")  # and its index on `time`, made again for the new table
        db.execute(_INDEX)


def _has_worker(db: Database) -> bool:
    if db.dialect == "postgres":
        found = db.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
            "AND table_name = 'webapp_calls' AND column_name = 'worker'"
        ).fetchone()
        return found is not None
    return "worker" in {row[1] for row in db.execute("PRAGMA table_info(webapp_calls)").fetchall()}
