"""Persistence of views in the app's database (framework-owned table `webapp_views`).

One row per view: its secrets, owner, life-cycle state, last opening input and the view's own data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from webapp.core.database import FrameworkTable, upsert
from webapp.core.sql import Database

__all__ = ["ViewRow", "ViewStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webapp_views (
    handle TEXT PRIMARY KEY,
    attach_key TEXT NOT NULL UNIQUE,
    app TEXT NOT NULL,
    principal TEXT,
    session_id TEXT,
    bound {int} NOT NULL,
    state TEXT NOT NULL,
    input TEXT,
    data TEXT NOT NULL,
    created {float} NOT NULL,
    bound_at {float} NOT NULL,
    changed_at {float} NOT NULL,
    worker TEXT
)
"""
_COLUMNS = (
    "handle, attach_key, app, principal, session_id, bound, state, input, data, created, bound_at, changed_at, worker"
)
_SAVE = upsert("webapp_views", _COLUMNS.split(", "), "handle")
_CHUNK = 500  # keys in one `IN (…)` read
_MINE = "(worker IS NULL OR worker = ?)"  # a worker writes only the rows of views nobody or it holds (apps.md §14)
_SAVE_MINE = f"{_SAVE} WHERE webapp_views.worker IS NULL OR webapp_views.worker = ?"
_OPEN = "state IN ('pending', 'live', 'disconnected')"
_HELD = "state IN ('live', 'disconnected')"
# routing, sweeps and liveness read keyed or indexed, never the whole table (apps.md §14.1)
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS webapp_views_principal ON webapp_views (principal, state)",
    "CREATE INDEX IF NOT EXISTS webapp_views_session ON webapp_views (session_id)",
    "CREATE INDEX IF NOT EXISTS webapp_views_worker ON webapp_views (worker, state, changed_at)",
)
_SWEEPABLE = "state IN ('pending', 'disconnected', 'closed', 'replaced') AND changed_at <= ?"  # live views never expire
# the workers holding live or disconnected views: a skip over the worker index (one step per worker, not per view)
_HOLDERS = f"""
WITH RECURSIVE holder(worker) AS (
    SELECT min(worker) FROM webapp_views
    UNION ALL
    SELECT (SELECT min(worker) FROM webapp_views WHERE worker > holder.worker) FROM holder WHERE worker IS NOT NULL
)
SELECT holder.worker FROM holder WHERE holder.worker IS NOT NULL AND holder.worker <> ?
AND EXISTS (SELECT 1 FROM webapp_views WHERE webapp_views.worker = holder.worker AND webapp_views.{_HELD})
"""


@dataclass(frozen=True, slots=True)
class ViewRow:
    """A view as stored. `input` and `data` are JSON texts (`input` is None when the view got no input)."""

    handle: str
    attach_key: str
    app: str
    principal: str | None
    session_id: str | None
    bound: bool
    state: str
    input: str | None
    data: str
    created: float
    bound_at: float
    changed_at: float
    worker: str | None = None  # the worker whose tab holds (or last held) the view; None: one process, or nobody


class ViewStore(FrameworkTable):
    """Reads and writes `webapp_views` rows on the store's thread; every write commits at once (the table is small).
    The `…_soon` writes hand the statement over without waiting (in order with every other)."""

    schema = (_SCHEMA,)

    def _upgrade(self, db: Database) -> None:
        if db.dialect == "postgres":
            db.execute("ALTER TABLE webapp_views ADD COLUMN IF NOT EXISTS worker TEXT")
        elif "worker" not in {row[1] for row in db.execute("PRAGMA table_info(webapp_views)").fetchall()}:
            db.execute("ALTER TABLE webapp_views ADD COLUMN worker TEXT")  # a file written before several workers
        with db.transaction("webapp_schema"):  # after the worker column exists (a file written before it)
            for statement in _INDEXES:
                db.execute(statement)

    async def load(self) -> list[ViewRow]:
        """Every stored view, oldest first."""
        return await self._run(self._rows, f"SELECT {_COLUMNS} FROM webapp_views ORDER BY created", ())

    async def of_caller(self, principal: str | None, session_id: str | None, *, unbound: bool) -> list[ViewRow]:
        """The views routing may pick for a caller (apps.md §6), by index: the principal's open views (without a
        principal: nobody's), its MCP session's views, and with `unbound` (local mode) every open view of nobody."""
        where = ["principal = ? AND " + _OPEN] if principal is not None else []
        params: list[Any] = [principal] if principal is not None else []
        if principal is None or unbound:
            where.append("principal IS NULL AND " + _OPEN)
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        return await self._run(self._rows, f"SELECT {_COLUMNS} FROM webapp_views WHERE {' OR '.join(where)}", params)

    async def sweepable(self, worker: str, before: float) -> list[ViewRow]:
        """The views nobody or `worker` holds that have not changed since `before` and are not live (by index)."""
        where = f"(worker IS NULL AND {_SWEEPABLE}) OR (worker = ? AND {_SWEEPABLE})"
        query = f"SELECT {_COLUMNS} FROM webapp_views WHERE {where}"
        return await self._run(self._rows, query, (before, worker, before))

    async def holders(self, worker: str) -> list[str]:
        """The other workers that hold live or disconnected views."""
        return [str(row[0]) for row in await self._run(self._fetch, _HOLDERS, (worker,))]

    async def release_worker(self, worker: str, changed_at: float) -> int:
        """Take every live or disconnected view from `worker`, which is gone: disconnected, held by nobody; how many."""
        query = "UPDATE webapp_views SET state = 'disconnected', changed_at = ?, worker = NULL"
        return await self._run(self._count, f"{query} WHERE worker = ? AND {_HELD}", (changed_at, worker))

    async def find(self, column: str, value: str) -> ViewRow | None:
        """The view whose `handle` or `attach_key` is `value` (one another worker may have created)."""
        if column not in ("handle", "attach_key"):
            raise ValueError(column)
        found = await self._run(self._rows, f"SELECT {_COLUMNS} FROM webapp_views WHERE {column} = ?", (value,))
        return found[0] if found else None

    async def save(self, row: ViewRow, *, writer: str | None = None) -> None:
        """Insert or replace the whole row; with `writer` (a worker id) an existing row only while nobody or that
        worker holds it."""
        await self._run(self._write, *_saved(row, writer))

    def save_soon(self, row: ViewRow, *, writer: str | None = None) -> None:
        """`save` handed over without waiting (a failure is logged)."""
        self._post("a view's row", self._write, *_saved(row, writer))

    async def held_elsewhere(self, handles: Sequence[str], worker: str) -> list[str]:
        """Of `handles`, those whose row another worker's attach names now (by key, `_CHUNK` at a time)."""
        found: list[str] = []
        for start in range(0, len(handles), _CHUNK):
            chunk = tuple(handles[start : start + _CHUNK])
            query = f"SELECT handle FROM webapp_views WHERE handle IN ({', '.join('?' * len(chunk))}) AND worker <> ?"
            found += [str(row[0]) for row in await self._run(self._fetch, query, (*chunk, worker))]
        return found

    async def save_data(self, handle: str, data: str, *, writer: str) -> bool:
        """Store the view's own data while nobody or `writer` holds it; whether a row took it (False: another worker
        holds the view now)."""
        query = f"UPDATE webapp_views SET data = ? WHERE handle = ? AND {_MINE}"
        return await self._run(self._count, query, (data, handle, writer)) == 1

    def save_data_soon(self, handle: str, data: str, *, writer: str | None = None) -> None:
        """Store the view's own data only (the hot path after an action that changed it), without waiting."""
        if writer is None:
            query, params = "UPDATE webapp_views SET data = ? WHERE handle = ?", (data, handle)
        else:
            query, params = f"UPDATE webapp_views SET data = ? WHERE handle = ? AND {_MINE}", (data, handle, writer)
        self._post("a view's data", self._write, query, params)

    async def release(self, handle: str, worker: str, state: str, changed_at: float) -> None:
        """Take the view from `worker`, which is gone: `state` now, held by nobody (a newer holder's row stays)."""
        await self._run(
            self._write,
            "UPDATE webapp_views SET state = ?, changed_at = ?, worker = NULL WHERE handle = ? AND worker = ?",
            (state, changed_at, handle, worker),
        )

    async def released(self) -> list[str]:
        """The handles of views released as held by nobody while disconnected (their worker looked gone)."""
        query = "SELECT handle FROM webapp_views WHERE worker IS NULL AND state = 'disconnected'"
        return [str(row[0]) for row in await self._run(self._fetch, query, ())]

    async def delete(self, handle: str, *, writer: str | None = None) -> None:
        if writer is None:
            await self._run(self._write, "DELETE FROM webapp_views WHERE handle = ?", (handle,))
        else:
            await self._run(self._write, f"DELETE FROM webapp_views WHERE handle = ? AND {_MINE}", (handle, writer))

    # -- on the store's thread -------------------------------------------------------------------------------------
    def _fetch(self, query: str, params: Sequence[Any]) -> list[Any]:
        return self._conn.execute(query, params).fetchall()

    def _rows(self, query: str, params: Sequence[Any]) -> list[ViewRow]:
        return [_row(r) for r in self._conn.execute(query, params).fetchall()]

    def _count(self, query: str, params: Sequence[Any]) -> int:
        return self._conn.execute(query, params).rowcount

    def _write(self, query: str, params: Sequence[Any]) -> None:
        self._conn.execute(query, params)


def _saved(row: ViewRow, writer: str | None) -> tuple[str, tuple[Any, ...]]:
    """The statement and parameters that save `row` (see `ViewStore.save`)."""
    values = (
        row.handle,
        row.attach_key,
        row.app,
        row.principal,
        row.session_id,
        int(row.bound),
        row.state,
        row.input,
        row.data,
        row.created,
        row.bound_at,
        row.changed_at,
        row.worker,
    )
    return (_SAVE, values) if writer is None else (_SAVE_MINE, (*values, writer))


def _row(r: Any) -> ViewRow:
    return ViewRow(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6], r[7], r[8], r[9], r[10], r[11], r[12])
