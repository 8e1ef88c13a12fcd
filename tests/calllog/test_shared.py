"""The call log shared by workers: each one's records reach the others' logs through app events, labelled with
their worker, never with a secret in the event; an event that is no record is dropped."""

from __future__ import annotations

import asyncio
import json
import logging

import mcp_types
import pytest

from webapp.calllog import TOPIC, CallLog, CallRecord, CallSharing
from webapp.calllog.shared import from_payload, payload
from webapp.core.context import Caller
from webapp.events import AppEvents, Event, JsonValue

HANDLE = "ViewHandle-0123456789abcdefghij"
KEY = "AttachKey-0123456789abcdefghij"
ALICE = Caller(principal="alice", session_id=None, protocol="2026-07-28")
WAIT = 5  # seconds: the bound of every wait


def _call(log: CallLog, tool: str = "t", **arguments: object) -> CallRecord:
    text = f"open /inventory?key={KEY} for view {HANDLE}"
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=text)], structured_content={"view": HANDLE}
    )
    return log.record(tool=tool, arguments=arguments, result=result, caller=ALICE, duration=0.001)


async def test_a_call_on_one_worker_reaches_the_others_log_with_its_worker_and_no_secret() -> None:
    events = AppEvents()  # one bus stands for the cluster's: every worker's subscribers get every event
    one, two = CallLog(worker="w1"), CallLog(worker="w2")
    for log in (one, two):  # every worker knows the secrets of the views it reads
        log.add_secret(KEY)
    texts: asyncio.Queue[str] = asyncio.Queue()
    watcher = events.subscribe(TOPIC, lambda event: texts.put_nowait(event.text))
    sharings = [CallSharing(one, events), CallSharing(two, events)]
    for sharing in sharings:
        sharing.start()
    with one.subscribe() as on_one, two.subscribe() as on_two:
        made = [_call(one, "first", _view=HANDLE), _call(one, "second")]
        assert [await asyncio.wait_for(on_two.get(), WAIT) for _ in made] == made
        assert [r.key for r in two.records()] == [("w1", 1), ("w1", 2)]
        for _ in made:
            assert await asyncio.wait_for(on_one.get(), WAIT) in made  # its own records, once each
        answer = _call(two, "answer")
        assert answer.key == ("w2", 1)  # each worker counts its own calls
        assert await asyncio.wait_for(on_one.get(), WAIT) == answer
    published = [await asyncio.wait_for(texts.get(), WAIT) for _ in range(3)]
    assert [r.key for r in one.records()] == [("w1", 1), ("w1", 2), ("w2", 1)]
    assert all(HANDLE not in text and KEY not in text for text in published)
    assert f"{HANDLE[:6]}…" in published[0] and f"{KEY[:6]}…" in published[0]
    for sharing in sharings:
        sharing.stop()
    watcher.close()
    _call(one, "unshared")
    assert events.subscribers(TOPIC) == 0 and len(two.records()) == 3


async def test_an_event_that_is_no_call_record_is_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    events, log = AppEvents(), CallLog(worker="w2")
    sharing = CallSharing(log, events)
    sharing.start()
    good = payload(_call(CallLog(worker="w1")))
    with caplog.at_level(logging.WARNING, logger="webapp.calllog.shared"), log.subscribe() as feed:
        bad: list[JsonValue] = [{**good, "seq": "7"}, {"worker": "w1"}, [1, 2], {**good, "blocks": "text"}]
        for wrong in bad:
            events.publish(TOPIC, wrong)
        events.publish(TOPIC, good)
        arrived = await asyncio.wait_for(feed.get(), WAIT)
    assert arrived is not None and arrived.key == ("w1", 1) and len(log) == 1
    assert len([r for r in caplog.records if "was dropped" in r.getMessage()]) == 4
    sharing.stop()


def test_a_record_survives_its_event_form_unchanged() -> None:
    record = _call(CallLog(worker="w1"), "t", nested={"a": [1, 2.5, None, True]})
    assert from_payload(Event(TOPIC, json.dumps(payload(record))).payload) == record


async def test_a_record_that_is_not_json_stays_in_its_workers_log(caplog: pytest.LogCaptureFixture) -> None:
    log = CallLog(worker="w1")
    sharing = CallSharing(log, AppEvents())
    sharing.start()
    with caplog.at_level(logging.WARNING, logger="webapp.calllog.shared"):
        _call(log, "nan", value=float("nan"))
    assert len(log) == 1 and "not shared: its record is not JSON" in caplog.text
    sharing.stop()
