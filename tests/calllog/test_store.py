"""Persistence of the call log in `webapp_calls` (SQLite and Postgres): round trip, restore after a restart,
pruning, masked secrets."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from webapp.calllog.memory import CallLog, note_routed_view
from webapp.calllog.store import CallLogStore
from webapp.core.context import Caller
from webapp.core.sql import open_database

SECRET = "view-handle-0123456789abcdef"


def _result(text: str, *, error: bool = False, structured: dict[str, object] | None = None) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], is_error=error, structured_content=structured
    )


def _call(
    log: CallLog,
    tool: str = "report",
    text: str = "OK",
    *,
    error: bool = False,
    structured: dict[str, object] | None = None,
) -> None:
    log.record(
        tool=tool,
        arguments={"_view": SECRET, "n": 1},
        result=_result(text, error=error, structured=structured),
        caller=Caller(principal="alice", session_id=None, protocol="2026-07-28"),
        duration=0.012,
    )


async def test_every_call_is_stored_and_comes_back_after_a_restart(database: str) -> None:
    db = database
    first_log, first = CallLog(size=10), CallLogStore(db)
    await first.open()
    await first.attach(first_log)
    _call(first_log, "report", '{\n  "a": 1\n}')
    _call(first_log, "fail", "<tool_error>\n<message>no</message>\n</tool_error>", error=True)
    _call(first_log, "open", "{}", structured={"view": "v1", "n": [1, 2]})
    before = first_log.records()
    await first.close()  # after the writes handed over before it

    second_log, second = CallLog(size=10), CallLogStore(db)
    await second.open()
    await second.attach(second_log)
    assert second_log.records() == before
    _call(second_log, "after")
    assert [r.seq for r in second_log.records()] == [1, 2, 3, 4]
    assert await second.count() == 4
    await second.close()


async def test_only_the_newest_calls_are_loaded_into_a_smaller_log(database: str) -> None:
    store = CallLogStore(database)
    await store.open()
    log = CallLog(size=100)
    await store.attach(log)
    for index in range(6):
        _call(log, f"t{index}")
    small = CallLog(size=3)
    await store.attach(small)
    assert [r.tool for r in small.records()] == ["t3", "t4", "t5"]
    await store.close()


async def test_the_table_is_pruned_by_count(database: str) -> None:
    store = CallLogStore(database, keep=5, prune_every=1)
    await store.open()
    log = CallLog(size=100)
    await store.attach(log)
    for index in range(12):
        _call(log, f"t{index}")
    assert await store.count() == 5
    assert [r.tool for r in await store.load(100)] == [f"t{i}" for i in range(7, 12)]
    await store.close()


async def test_the_table_is_pruned_by_age(database: str) -> None:
    now = [1_000_000.0]
    store = CallLogStore(database, max_age=60, prune_every=1000, clock=lambda: now[0])
    await store.open()
    log = CallLog(size=100)
    await store.attach(log)
    _call(log)
    assert await store.prune() == 0
    now[0] = 4e9  # far in the future: every stored call is older than a minute
    assert await store.prune() == 1
    assert await store.count() == 0
    await store.close()


async def test_secrets_are_stored_masked(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    store = CallLogStore(db)
    await store.open()
    log = CallLog(size=10)
    log.add_secret(SECRET)
    await store.attach(log)
    _call(log, "report", f"the view {SECRET} is open", structured={"view": SECRET})
    await store.close()
    stored = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert SECRET.encode() not in stored
    assert SECRET[:6].encode() in stored


def test_a_call_routed_to_a_view_is_recorded_with_that_view_masked() -> None:
    log = CallLog(size=10)
    note_routed_view("RoutedView-0123456789")
    log.record(
        tool="inventory_refresh_stock",
        arguments={},
        result=_result("{}"),
        caller=Caller(principal=None, session_id=None, protocol="2026-07-28"),
        duration=0.001,
    )
    _call(log, "next")  # the note is spent by the call it was made in
    first, second = log.records()
    assert first.view == "Routed…"
    assert second.view == f"{SECRET[:6]}…"  # from its `_view` argument


def test_bad_limits_are_refused_with_the_values() -> None:
    with pytest.raises(ValueError, match="keep >= 1"):
        CallLogStore(":memory:", keep=0)


async def test_an_unopened_store_says_how_to_fix_it() -> None:
    store = CallLogStore(":memory:")
    with pytest.raises(RuntimeError, match="call open"):
        await store.count()
    await store.close()


async def _opened(db: str, log: CallLog, **limits: Any) -> CallLogStore:
    store = CallLogStore(db, **limits)
    await store.open()
    await store.attach(log)
    return store


async def test_workers_sharing_a_database_keep_each_others_calls_and_a_restart_counts_on(database: str) -> None:
    one, two = CallLog(size=100, worker="w1"), CallLog(size=100, worker="w2")
    stores = [await _opened(database, one), await _opened(database, two)]
    for index in range(3):
        _call(one, f"one-{index}")
        _call(two, f"two-{index}")
    await stores[1].flush()  # each store writes on a thread of its own
    assert await stores[0].count() == 6
    assert await stores[0].load(10, worker="w1") == one.records()
    assert await stores[1].load(10, worker="w2") == two.records()
    assert [r.key for r in await stores[0].load(10)] == [(w, n) for n in (1, 2, 3) for w in ("w1", "w2")]
    await stores[0].close()

    again = CallLog(size=4, worker="w1")  # w1 restarts: the newest calls of both come back, its own count goes on
    stores[0] = await _opened(database, again)
    assert [r.tool for r in again.records()] == ["one-1", "two-1", "one-2", "two-2"]
    assert _call_key(again) == ("w1", 4) and await stores[0].count() == 7
    mine = CallLog(size=10, worker="w1")
    await stores[0].attach(mine, everyone=False)
    assert {r.worker for r in mine.records()} == {"w1"} and len(mine) == 4
    for store in stores:
        await store.close()


def _call_key(log: CallLog) -> tuple[str, int]:
    _call(log, "after")
    return log.records()[-1].key


async def test_pruning_by_count_keeps_the_newest_calls_of_all_workers(database: str) -> None:
    one, two = CallLog(size=100, worker="w1"), CallLog(size=100, worker="w2")
    stores = [await _opened(database, log, keep=5, prune_every=1) for log in (one, two)]
    for index in range(12):
        _call(one if index % 3 else two, f"t{index}")
        await stores[0 if index % 3 else 1].flush()  # in this order across the two stores' threads
    assert await stores[0].count() == 5
    assert [r.tool for r in await stores[1].load(100)] == [f"t{i}" for i in range(7, 12)]
    for store in stores:
        await store.close()


OLD_TABLE = """CREATE TABLE webapp_calls (
    seq {int} PRIMARY KEY, time {float} NOT NULL, tool TEXT NOT NULL, arguments TEXT NOT NULL, blocks TEXT NOT NULL,
    is_error {int} NOT NULL, structured TEXT, duration_ms {float} NOT NULL, principal TEXT, session_id TEXT,
    protocol TEXT NOT NULL, view TEXT
)"""


async def test_a_table_written_before_several_workers_gets_the_worker_key_and_keeps_every_row(database: str) -> None:
    db = open_database(database)
    db.execute(db.ddl(OLD_TABLE))
    db.execute("CREATE INDEX webapp_calls_time ON webapp_calls (time)")
    for seq in (1, 2, 3):
        db.execute(
            "INSERT INTO webapp_calls VALUES (?, ?, ?, '{}', '[]', 0, NULL, 1.5, 'alice', NULL, '2026-07-28', NULL)",
            (seq, time.time() - 60 + seq, f"old-{seq}"),
        )
    db.close()
    log = CallLog(size=10)  # the one process that wrote it
    store = await _opened(database, log)
    assert [(r.key, r.tool) for r in log.records()] == [(("", n), f"old-{n}") for n in (1, 2, 3)]
    _call(log, "new")
    other = CallLog(size=10, worker="w1")
    again = await _opened(database, other)  # another worker opening it: changed once already
    _call(other, "w1's first")  # its seq 1 next to the old seq 1: no collision
    await again.flush()
    assert [r.key for r in await store.load(10)] == [("", 1), ("", 2), ("", 3), ("", 4), ("w1", 1)]
    assert await store.last_seq("w1") == 1 and await store.last_seq() == 4
    for opened in (store, again):
        await opened.close()
