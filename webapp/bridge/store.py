"""Persistence of views in the app's database (framework-owned table `webapp_views`).

One row per view: its secrets, owner, life-cycle state, last opening input and the view's own data.
"""

from __future__ import annotations

from dataclasses import dataclass

from webapp.core.database import FrameworkTable, upsert

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
    changed_at {float} NOT NULL
)
"""
_COLUMNS = "handle, attach_key, app, principal, session_id, bound, state, input, data, created, bound_at, changed_at"
_SAVE = upsert("webapp_views", _COLUMNS.split(", "), "handle")


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


class ViewStore(FrameworkTable):
    """Reads and writes `webapp_views` rows; every write commits at once (the table is small)."""

    schema = (_SCHEMA,)

    def load(self) -> list[ViewRow]:
        """Every stored view, oldest first."""
        rows = self._conn.execute(f"SELECT {_COLUMNS} FROM webapp_views ORDER BY created").fetchall()
        return [ViewRow(r[0], r[1], r[2], r[3], r[4], bool(r[5]), r[6], r[7], r[8], r[9], r[10], r[11]) for r in rows]

    def save(self, row: ViewRow) -> None:
        """Insert or replace the whole row."""
        self._conn.execute(
            _SAVE,
            (
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
            ),
        )

    def save_data(self, handle: str, data: str) -> None:
        """Store the view's own data only (the hot path after an action that changed it)."""
        self._conn.execute("UPDATE webapp_views SET data = ? WHERE handle = ?", (data, handle))

    def delete(self, handle: str) -> None:
        self._conn.execute("DELETE FROM webapp_views WHERE handle = ?", (handle,))
