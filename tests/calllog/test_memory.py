"""The call log: bounded records, secrets masked everywhere, a live feed; and the server recording every call."""

from __future__ import annotations

import asyncio
import contextlib

import mcp_types

from tests.support.apps import add_tools
from webapp.calllog.masking import Masker, mask_secret
from webapp.calllog.memory import CallLog, CallRecord
from webapp.core.context import STDIO, Caller
from webapp.core.settings import Settings
from webapp.server.composition import WebApp

LEGACY = Caller(principal=None, session_id="0123456789abcdef0123456789abcdef", protocol="2025-11-25")
KEY = "k3y-AAAAAAAAAAAAAAAAAAAAAAAA"
HANDLE = "v1ew-BBBBBBBBBBBBBBBBBBBBBBBB"


def _result(*texts: str, structured: dict[str, object] | None = None, error: bool = False) -> mcp_types.CallToolResult:
    content: list[mcp_types.ContentBlock] = [mcp_types.TextContent(type="text", text=text) for text in texts]
    return mcp_types.CallToolResult(content=content, structured_content=structured, is_error=error)


def _record(log: CallLog, tool: str = "t", **arguments: object) -> CallRecord:
    return log.record(tool=tool, arguments=arguments, result=_result("ok"), caller=LEGACY, duration=0.002)


def test_a_secret_is_masked_to_its_first_six_characters() -> None:
    assert mask_secret(KEY) == "k3y-AA…"


def test_the_log_keeps_only_the_newest_records() -> None:
    log = CallLog(size=3)
    for n in range(5):
        _record(log, n=n)
    assert [record.arguments["n"] for record in log.records()] == [2, 3, 4]
    assert [record.seq for record in log.records()] == [3, 4, 5]


def test_registered_secrets_are_masked_in_arguments_blocks_and_structured_content() -> None:
    log = CallLog()
    log.add_secret(KEY)
    result = _result(
        f"Give the user this URL to open the view: http://127.0.0.1:8080/inventory?key={KEY}",
        structured={"url": f"/inventory?key={KEY}", "nested": [{KEY: KEY}]},
    )
    record = log.record(tool="inventory", arguments={"note": f"key {KEY}"}, result=result, caller=LEGACY, duration=0)
    assert KEY not in repr(record)
    assert record.arguments == {"note": "key k3y-AA…"}
    assert record.blocks == ("Give the user this URL to open the view: http://127.0.0.1:8080/inventory?key=k3y-AA…",)
    assert record.structured_content == {"url": "/inventory?key=k3y-AA…", "nested": [{"k3y-AA…": "k3y-AA…"}]}


def test_the_session_id_is_masked_in_the_record_and_wherever_it_appears() -> None:
    log = CallLog()
    result = _result(f"session {LEGACY.session_id}")
    record = log.record(tool="t", arguments={}, result=result, caller=LEGACY, duration=0)
    assert record.session_id == "012345…"
    assert record.blocks == ("session 012345…",)
    assert record.protocol == "2025-11-25"


def test_the_view_handle_is_taken_from_view_or_the_opening_result_and_masked() -> None:
    log = CallLog()
    opened = log.record(
        tool="inventory", arguments={}, result=_result("ok", structured={"view": HANDLE}), caller=LEGACY, duration=0
    )
    acted = log.record(
        tool="inventory_refresh", arguments={"_view": HANDLE}, result=_result(), caller=LEGACY, duration=0
    )
    assert opened.view == acted.view == "v1ew-B…"
    assert opened.structured_content == {"view": "v1ew-B…"}
    assert acted.arguments == {"_view": "v1ew-B…"}


def test_a_longer_secret_containing_a_shorter_one_is_masked_whole() -> None:
    masker = Masker()
    masker.add("abcdefgh")
    masker.add("abcdefgh-and-more")
    assert masker.text("x abcdefgh-and-more y abcdefgh") == "x abcdef… y abcdef…"


def test_the_stdio_session_constant_is_not_treated_as_a_secret() -> None:
    log = CallLog()
    caller = Caller(principal=None, session_id=STDIO, protocol=STDIO)
    record = log.record(tool="t", arguments={"word": "stdio"}, result=_result(), caller=caller, duration=0)
    assert record.arguments == {"word": "stdio"}


async def test_a_subscriber_receives_new_records_until_it_closes() -> None:
    log = CallLog()
    _record(log, n=0)
    subscription = log.subscribe()
    _record(log, n=1)
    _record(log, n=2)
    subscription.close()
    _record(log, n=3)
    received = [record.arguments["n"] async for record in subscription]
    assert received == [1, 2]


async def test_a_slow_subscriber_loses_the_oldest_records() -> None:
    log = CallLog(feed_size=2)
    with log.subscribe() as subscription:
        for n in range(4):
            _record(log, n=n)
        first = await asyncio.wait_for(subscription.get(), 1)
    assert first is not None and first.arguments["n"] == 2
    assert subscription.dropped == 2


def test_restored_records_come_first_and_new_ones_are_numbered_after_them() -> None:
    earlier = CallLog()
    for n in range(3):
        _record(earlier, n=n)
    log = CallLog(size=2)
    seen: list[int] = []
    log.on_record(lambda record: seen.append(record.seq))
    log.restore(reversed(earlier.records()))
    assert [record.seq for record in log.records()] == [2, 3]
    assert seen == []
    assert _record(log).seq == 4
    assert log.size == 2


def test_listeners_see_every_record_and_a_failing_listener_breaks_nothing() -> None:
    log = CallLog()
    seen: list[int] = []

    def failing(record: CallRecord) -> None:
        raise RuntimeError("listener bug")

    log.on_record(failing)
    remove = log.on_record(lambda record: seen.append(record.seq))
    _record(log)
    remove()
    _record(log)
    assert seen == [1]
    assert len(log) == 2


async def test_the_server_records_each_call_including_one_that_raised() -> None:
    webapp = WebApp(Settings(port=0))
    add_tools(webapp)
    echoed = await webapp.call_tool("echo", {"text": "hi"}, LEGACY)
    failed = await webapp.call_tool("boom", {}, LEGACY)
    first, second = webapp.calllog.records()
    assert echoed.is_error is False and failed.is_error is True
    assert (first.tool, first.arguments, first.blocks, first.is_error) == ("echo", {"text": "hi"}, ("hi",), False)
    assert second.tool == "boom" and second.is_error
    assert second.blocks[0].startswith('<tool_error code="INTERNAL_ERROR"')
    assert first.duration_ms >= 0 and first.session_id == "012345…"


async def test_the_server_records_a_cancelled_call_and_lets_the_cancellation_through() -> None:
    webapp = WebApp(Settings(port=0))
    add_tools(webapp)
    call = asyncio.create_task(webapp.call_tool("wait_session_end", {"session_id": "never"}, LEGACY))
    await asyncio.sleep(0)  # let the call start
    call.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await call
    [record] = webapp.calllog.records()
    assert record.is_error and record.blocks == ("The call was cancelled by the caller.",)


async def test_another_workers_record_is_merged_once_fed_to_subscribers_and_not_to_listeners() -> None:
    theirs = _record(CallLog(worker="w2"), "elsewhere")
    log = CallLog(size=3, worker="w1")
    persisted: list[CallRecord] = []
    log.on_record(persisted.append)
    with log.subscribe() as feed:
        assert log.merge(theirs) is True
        assert log.merge(theirs) is False  # already here
        assert log.merge(_record(log, "mine")) is False  # this worker's own record
        assert await asyncio.wait_for(feed.get(), 1) == theirs
    assert [r.key for r in log.records()] == [("w2", 1), ("w1", 1)]
    assert [r.tool for r in persisted] == ["mine"]
    for _ in range(3):
        _record(log)
    assert log.merge(theirs) is True  # gone from the bounded log, so it is new again
    assert [r.key for r in log.records()] == [("w1", 3), ("w1", 4), ("w2", 1)]


def test_restored_records_of_several_workers_are_ordered_by_time_and_numbering_follows_this_workers() -> None:
    one, two = CallLog(worker="w1"), CallLog(worker="w2")
    made = [_record(one), _record(two), _record(two), _record(one)]
    log = CallLog(worker="w2")
    log.restore(reversed(made), last_seq=0)
    assert log.records() == made
    assert _record(log).key == ("w2", 3)
    later = CallLog(worker="w1")
    later.restore([made[1]], last_seq=7)  # its own newest were not among those loaded
    assert _record(later).key == ("w1", 8)
