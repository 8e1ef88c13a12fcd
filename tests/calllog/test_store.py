"""Persistence of the call log in `webapp_calls` (SQLite and Postgres): round trip, restore after a restart,
pruning, masked secrets."""

from __future__ import annotations

from pathlib import Path

import mcp_types
import pytest

from webapp.calllog.memory import CallLog, note_routed_view
from webapp.calllog.store import CallLogStore
from webapp.core.context import Caller

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


def test_every_call_is_stored_and_comes_back_after_a_restart(database: str) -> None:
    db = database
    first_log, first = CallLog(size=10), CallLogStore(db)
    first.open()
    first.attach(first_log)
    _call(first_log, "report", '{\n  "a": 1\n}')
    _call(first_log, "fail", "<tool_error>\n<message>no</message>\n</tool_error>", error=True)
    _call(first_log, "open", "{}", structured={"view": "v1", "n": [1, 2]})
    before = first_log.records()
    first.close()

    second_log, second = CallLog(size=10), CallLogStore(db)
    second.open()
    second.attach(second_log)
    assert second_log.records() == before
    _call(second_log, "after")
    assert [r.seq for r in second_log.records()] == [1, 2, 3, 4]
    assert second.count() == 4
    second.close()


def test_only_the_newest_calls_are_loaded_into_a_smaller_log(database: str) -> None:
    store = CallLogStore(database)
    store.open()
    log = CallLog(size=100)
    store.attach(log)
    for index in range(6):
        _call(log, f"t{index}")
    small = CallLog(size=3)
    store.attach(small)
    assert [r.tool for r in small.records()] == ["t3", "t4", "t5"]
    store.close()


def test_the_table_is_pruned_by_count(database: str) -> None:
    store = CallLogStore(database, keep=5, prune_every=1)
    store.open()
    log = CallLog(size=100)
    store.attach(log)
    for index in range(12):
        _call(log, f"t{index}")
    assert store.count() == 5
    assert [r.tool for r in store.load(100)] == [f"t{i}" for i in range(7, 12)]
    store.close()


def test_the_table_is_pruned_by_age(database: str) -> None:
    now = [1_000_000.0]
    store = CallLogStore(database, max_age=60, prune_every=1000, clock=lambda: now[0])
    store.open()
    log = CallLog(size=100)
    store.attach(log)
    _call(log)
    assert store.prune() == 0
    now[0] = 4e9  # far in the future: every stored call is older than a minute
    assert store.prune() == 1
    assert store.count() == 0
    store.close()


def test_secrets_are_stored_masked(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    store = CallLogStore(db)
    store.open()
    log = CallLog(size=10)
    log.add_secret(SECRET)
    store.attach(log)
    _call(log, "report", f"the view {SECRET} is open", structured={"view": SECRET})
    store.close()
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


def test_an_unopened_store_says_how_to_fix_it() -> None:
    with pytest.raises(RuntimeError, match="call open"):
        CallLogStore(":memory:").count()
