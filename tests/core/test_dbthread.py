"""A framework store's statements off the event loop (`webapp.core.dbthread`): they run on the store's thread in the
order they were handed over, a statement past its deadline fails its caller and is interrupted (the next one runs),
and a write that waited past its deadline is never run but logged — on a real SQLite database."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from webapp.core.dbthread import DatabaseThread
from webapp.core.sql import UNAVAILABLE_ERRORS, Database, DatabaseTimeout, open_database

DEADLINE = 0.3
ENDLESS = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"  # never ends


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    with contextlib.closing(open_database(tmp_path / "app.db")) as conn:
        conn.execute("CREATE TABLE noted (n INTEGER NOT NULL)")
        yield conn


def noted(db: Database) -> list[int]:
    return [int(row[0]) for row in db.execute("SELECT n FROM noted ORDER BY rowid").fetchall()]


async def test_statements_run_on_the_stores_thread_in_the_order_they_were_handed_over(db: Database) -> None:
    thread = DatabaseThread("test", db.interrupt, deadline=DEADLINE)
    loop_thread = threading.get_ident()
    try:
        for n in range(5):
            thread.post(lambda n=n: db.execute("INSERT INTO noted (n) VALUES (?)", (n,)), f"number {n}")
        ran_on = await thread.run(threading.get_ident)
        assert await thread.run(lambda: noted(db)) == [0, 1, 2, 3, 4]  # the writes handed over before it ran first
    finally:
        thread.stop()
    assert ran_on != loop_thread


async def test_a_statement_past_its_deadline_fails_its_caller_at_the_deadline_and_the_next_one_runs(
    db: Database,
) -> None:
    thread = DatabaseThread("test", db.interrupt, deadline=DEADLINE)
    try:
        started = time.monotonic()
        with pytest.raises(DatabaseTimeout, match=r"did not answer test's statement within 0\.3 s"):
            await thread.run(lambda: db.execute(ENDLESS).fetchone())
        assert DEADLINE <= time.monotonic() - started < DEADLINE + 0.5
        assert issubclass(DatabaseTimeout, UNAVAILABLE_ERRORS)  # a call answers STORE_UNAVAILABLE
        async with asyncio.timeout(2):  # the stalled statement was interrupted: the thread goes on
            assert await thread.run(lambda: db.execute("SELECT 1").fetchone()) == (1,)
    finally:
        thread.stop()


async def test_a_write_that_waited_past_its_deadline_never_runs_and_is_logged(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    release = threading.Event()
    thread = DatabaseThread("test", lambda: None, deadline=DEADLINE)  # nothing interrupts the stall below
    caplog.set_level(logging.WARNING, "webapp.core.dbthread")
    try:
        thread.post(lambda: release.wait(5), "a stall")  # the thread is busy past the deadline of what follows
        thread.post(lambda: db.execute("INSERT INTO noted (n) VALUES (1)"), "a late number")
        with pytest.raises(DatabaseTimeout):
            await thread.run(lambda: noted(db))
        release.set()
        assert await thread.run(lambda: noted(db)) == []
    finally:
        release.set()
        thread.stop()
    assert "test: a late number was not written" in caplog.text
