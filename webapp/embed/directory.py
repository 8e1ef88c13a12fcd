"""Which worker holds each tunnel (framework-owned table `webapp_tunnels`, apps.md §13 and §14): a tunnel's calls may
land on any worker, and one that does not hold it passes them to the one that does. Rows are keyed by the SHA-256
digest of the tunnel id (the id itself is never stored).
"""

from __future__ import annotations

import time

from webapp.core.database import FrameworkTable, upsert

__all__ = ["TunnelDirectory"]

_KEEP = 7 * 24 * 3600.0  # seconds a row of a worker that never closed its tunnel (killed) is kept
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS webapp_tunnels (
    digest TEXT PRIMARY KEY,
    worker TEXT NOT NULL,
    created {float} NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS webapp_tunnels_by_age ON webapp_tunnels (created)",
)


class TunnelDirectory(FrameworkTable):
    """Records, finds and forgets the worker of a tunnel by its digest (every write commits at once, on the store's
    thread)."""

    schema = _SCHEMA

    async def record(self, digest: str, worker: str, *, now: float | None = None) -> None:
        await self._run(self._record, digest, worker, time.time() if now is None else now)

    async def worker_of(self, digest: str) -> str | None:
        return await self._run(self._worker_of, digest)

    def forget_soon(self, digest: str) -> None:
        """Forget the tunnel's row without waiting (a failure is logged: the row only ages out then)."""
        self._post("a tunnel's row", self._forget, digest)

    # -- on the store's thread -------------------------------------------------------------------------------------
    def _record(self, digest: str, worker: str, now: float) -> None:
        self._open()
        db = self._conn
        db.execute("DELETE FROM webapp_tunnels WHERE created < ?", (now - _KEEP,))
        db.execute(upsert("webapp_tunnels", ("digest", "worker", "created"), "digest"), (digest, worker, now))

    def _worker_of(self, digest: str) -> str | None:
        self._open()
        row = self._conn.execute("SELECT worker FROM webapp_tunnels WHERE digest = ?", (digest,)).fetchone()
        return None if row is None else str(row[0])

    def _forget(self, digest: str) -> None:
        self._open()
        self._conn.execute("DELETE FROM webapp_tunnels WHERE digest = ?", (digest,))
