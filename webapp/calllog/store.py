"""Persistence of the call log in the app's database (framework-owned table `webapp_calls`).

Records are stored as the call log made them (secrets already masked), pruned by count and age, and the newest
ones are loaded back into the in-memory log when the server starts.
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
from webapp.core.database import FrameworkTable, dump_json, upsert
from webapp.core.sql import DATABASE_ERRORS

__all__ = ["DEFAULT_KEEP", "DEFAULT_MAX_AGE", "CallLogStore"]

DEFAULT_KEEP = 10_000
"""Calls kept in the database by default."""
DEFAULT_MAX_AGE = 30 * 24 * 3600.0
"""Seconds a call is kept in the database by default (30 days)."""

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webapp_calls (
    seq {int} PRIMARY KEY,
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
    view TEXT
)
"""
_INDEX = "CREATE INDEX IF NOT EXISTS webapp_calls_time ON webapp_calls (time)"
_COLUMNS = (
    "seq, time, tool, arguments, blocks, is_error, structured, duration_ms, principal, session_id, protocol, view"
)
_SAVE = upsert("webapp_calls", _COLUMNS.split(", "), "seq")


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
    )


def _record(row: tuple[Any, ...]) -> CallRecord:
    seq, stamp, tool, arguments, blocks, is_error, structured, duration_ms, principal, session_id, protocol, view = row
    return CallRecord(
        seq=int(seq),
        time=datetime.fromtimestamp(float(stamp), UTC),
        tool=str(tool),
        arguments=orjson.loads(arguments),
        blocks=tuple(str(text) for text in orjson.loads(blocks)),
        is_error=bool(is_error),
        structured_content=None if structured is None else orjson.loads(structured),
        duration_ms=float(duration_ms),
        principal=principal,
        session_id=session_id,
        protocol=str(protocol),
        view=view,
    )


class CallLogStore(FrameworkTable):
    """Reads and writes `webapp_calls`; keeps at most `keep` calls, none older than `max_age` seconds.

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

    def open(self) -> None:
        """Connect to the database, create the table if needed and prune it."""
        if self._db is None:
            super().open()
            self.prune()

    def save(self, record: CallRecord) -> None:
        """Store one record (replacing a stored one with the same `seq`)."""
        self._conn.execute(_SAVE, _row(record))
        self._unsaved_prunes += 1
        if self._unsaved_prunes >= self._prune_every:
            self.prune()

    def load(self, limit: int) -> list[CallRecord]:
        """The newest `limit` records, oldest first."""
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM webapp_calls ORDER BY seq DESC LIMIT ?", (max(limit, 0),)
        ).fetchall()
        return [_record(row) for row in reversed(rows)]

    def count(self) -> int:
        return int(self._conn.execute("SELECT count(*) FROM webapp_calls").fetchone()[0])

    def last_seq(self) -> int:
        """The highest stored `seq` (0 for an empty table)."""
        return int(self._conn.execute("SELECT coalesce(max(seq), 0) FROM webapp_calls").fetchone()[0])

    def prune(self) -> int:
        """Delete the calls older than `max_age` and all but the newest `keep`; how many were deleted."""
        self._unsaved_prunes = 0
        db = self._conn
        old = db.execute("DELETE FROM webapp_calls WHERE time < ?", (self._clock() - self.max_age,)).rowcount
        surplus = db.execute(
            "DELETE FROM webapp_calls WHERE seq <= (SELECT seq FROM webapp_calls ORDER BY seq DESC LIMIT 1 OFFSET ?)",
            (self.keep,),
        ).rowcount
        return old + surplus

    def attach(self, calllog: CallLog) -> Callable[[], None]:
        """Load the newest stored calls into `calllog` and save every new one; returns a function that detaches."""
        calllog.restore(self.load(calllog.size))

        def persist(record: CallRecord) -> None:
            if not self.is_open:  # a call that outlived the server's drain: it stays in the in-memory log only
                log.warning("call %d (%s) not persisted: the call-log store is closed", record.seq, record.tool)
                return
            try:
                self.save(record)
            except DATABASE_ERRORS:
                log.exception("could not persist call %d (%s)", record.seq, record.tool)

        return calllog.on_record(persist)
