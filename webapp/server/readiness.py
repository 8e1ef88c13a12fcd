"""Readiness (apps.md §16): a worker is ready while its database answers and it is not draining. The database is
asked on a connection of its own, in a thread of its own, with a short connect timeout, and the answer is kept for a
second; Redis's state is reported beside it but never makes a worker unready (its own views work without Redis).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from webapp.core.sql import connect_options, database_kind

__all__ = ["CACHE", "WAIT", "DatabaseCheck", "Readiness", "ReadinessReport"]

log = logging.getLogger(__name__)
CACHE = 1.0
"""Seconds a database check's answer is kept: the probes and scrapes in between reuse it."""
WAIT = 0.5
"""Seconds a probe waits for a database check under way; past that it answers "not ready" (the check goes on)."""
_CONNECT_TIMEOUT = 2  # seconds: libpq's smallest (keepalive and `tcp_user_timeout` as every connection's)
_ABANDON = 5.0  # seconds after which a check still hanging (a frozen server) is left behind and a new one starts
_SQLITE_TIMEOUT = 0.5
Connection = sqlite3.Connection | psycopg.Connection[Any]


class DatabaseCheck:
    """Whether the app's database answers now: one statement on a connection of its own (opened anew after a
    failure), run in a daemon thread, so neither the event loop nor the process's exit ever waits for it."""

    def __init__(self, target: str | Path) -> None:
        self._target = target
        self._conn: Connection | None = None
        self._lock = threading.Lock()  # taking and putting back the connection (never held while it is used)
        self._closed = False
        self._answered: tuple[float, bool] | None = None  # (monotonic time, up) of the newest finished check
        self._asked: tuple[float, asyncio.Future[bool]] | None = None  # the check under way, and when it started

    async def up(self) -> bool:
        """The newest answer when it is at most `CACHE` seconds old; else a new check's, awaited at most `WAIT`
        seconds (False past that: a database that takes longer does not answer in time)."""
        now = time.monotonic()
        if self._target == ":memory:":
            return True
        if self._answered is not None and now - self._answered[0] < CACHE:
            return self._answered[1]
        if self._asked is None or self._asked[1].done() or now - self._asked[0] > _ABANDON:
            self._asked = (now, self._start())
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(asyncio.shield(self._asked[1]), WAIT)
        return False

    def close(self) -> None:
        """Close the check's connection (a check still running closes its own when it ends)."""
        with self._lock:
            conn, self._conn, self._closed = self._conn, None, True
        _close(conn)

    def _start(self) -> asyncio.Future[bool]:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[bool] = loop.create_future()

        def settle(up: bool) -> None:
            self._answered = (time.monotonic(), up)
            if not answer.done():
                answer.set_result(up)

        def run() -> None:
            up = self._ask()
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for the answer
                loop.call_soon_threadsafe(settle, up)

        threading.Thread(target=run, name="readiness-database", daemon=True).start()
        return answer

    def _ask(self) -> bool:
        """In the check's thread: the connection is taken while in use, so a check left behind keeps its own."""
        with self._lock:
            conn, self._conn = self._conn, None
        try:
            if conn is None:
                conn = self._connect()
            conn.execute("SELECT 1" if isinstance(conn, psycopg.Connection) else "PRAGMA schema_version").fetchone()
        except Exception as error:
            log.debug("the database did not answer the readiness check (%s)", type(error).__name__)
            _close(conn)
            return False
        with self._lock:
            if self._conn is None and not self._closed:
                conn, self._conn = None, conn
        _close(conn)  # closed meanwhile, or another check put its connection back first
        return True

    def _connect(self) -> Connection:
        target = self._target
        if database_kind(target) == "sqlite":  # an existing file only: a check never creates the database
            uri = Path(target).resolve().as_uri() + "?mode=rw"
            return sqlite3.connect(uri, uri=True, timeout=_SQLITE_TIMEOUT, check_same_thread=False)
        url = str(target)
        options = connect_options(url, _CONNECT_TIMEOUT)
        return psycopg.connect(url, autocommit=True, application_name="webapp-readiness", **options)


def _close(conn: Connection | None) -> None:
    if conn is not None:
        with contextlib.suppress(Exception):
            conn.close()


@dataclass(frozen=True, slots=True)
class ReadinessReport:
    """One readiness answer: the database up, the worker draining, Redis up (None: no Redis configured)."""

    database: bool
    draining: bool
    redis: bool | None

    @property
    def ready(self) -> bool:
        return self.database and not self.draining

    @property
    def reason(self) -> str | None:
        if self.draining:
            return "draining: the worker is stopping and takes no new calls"
        if not self.database:
            return "the database does not answer"
        return None

    def body(self) -> dict[str, object]:
        """The JSON body of `/readyz` (nothing else: no address, no error text)."""
        body: dict[str, object] = {"status": "ready" if self.ready else "not ready"}
        if (reason := self.reason) is not None:
            body["reason"] = reason
        body["database"] = "up" if self.database else "down"
        body["draining"] = self.draining
        body["redis"] = "off" if self.redis is None else "up" if self.redis else "down"
        return body


class Readiness:
    """The worker's readiness from its database check, its drain and its Redis state; keeps the newest report and
    counts how often the answer flipped (the metrics expose both)."""

    def __init__(self, database: DatabaseCheck, draining: Callable[[], bool], redis: Callable[[], bool | None]) -> None:
        self.database = database
        self._draining = draining
        self._redis = redis
        self.latest: ReadinessReport | None = None
        self.changes = 0
        """How often readiness flipped since the start (ready → not ready or back)."""

    async def report(self) -> ReadinessReport:
        report = ReadinessReport(await self.database.up(), self._draining(), self._redis())
        if self.latest is not None and self.latest.ready != report.ready:
            self.changes += 1
        self.latest = report
        return report
