"""The call log shared by several workers: while a viewer follows the call log on some worker, each finished call's
(masked) record goes out as an app event, and the records other workers publish come into this worker's log, so its
viewer lists the calls of every worker; a viewer that opens first reads every worker's newest records from the shared
table (the workers shared none while nobody watched)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from webapp.calllog.memory import CallLog, CallRecord
from webapp.calllog.store import CallLogStore
from webapp.core.sql import DATABASE_ERRORS
from webapp.events import AppEvents, Event, JsonValue, Subscription

__all__ = ["CATCH_UP_AGAIN", "TOPIC", "CallSharing", "from_payload", "payload"]

log = logging.getLogger(__name__)
TOPIC = "webapp/calls"
"""The app-event topic of finished calls (payload: one record, as `payload` makes it)."""
CATCH_UP_AGAIN = 2.5
"""Seconds after a viewer opened when it reads the shared table again: by then every worker has seen (at its look
once a second) the heartbeat (once a second) that says a viewer follows the log, and shares its records live."""


def payload(record: CallRecord) -> dict[str, JsonValue]:
    """A record as an event payload: the stored record's fields (secrets already masked), time as a Unix time."""
    return {
        "worker": record.worker,
        "seq": record.seq,
        "time": record.time.timestamp(),
        "tool": record.tool,
        "arguments": record.arguments,
        "blocks": list(record.blocks),
        "is_error": record.is_error,
        "structured": record.structured_content,
        "duration_ms": record.duration_ms,
        "principal": record.principal,
        "session_id": record.session_id,
        "protocol": record.protocol,
        "view": record.view,
    }


def from_payload(value: Any) -> CallRecord:
    """The record an event payload carries; `ValueError` when it is not one."""
    try:
        fields = dict(value)
        blocks, arguments, structured = fields["blocks"], fields["arguments"], fields["structured"]
        if not isinstance(blocks, list) or not isinstance(arguments, dict) or not isinstance(structured, dict | None):
            raise TypeError("blocks, arguments or structured content of the wrong type")
        return CallRecord(
            seq=_integer(fields["seq"]),
            time=datetime.fromtimestamp(float(fields["time"]), UTC),
            tool=_text(fields["tool"]),
            arguments=arguments,
            blocks=tuple(_text(block) for block in blocks),
            is_error=fields["is_error"] is True,
            structured_content=structured,
            duration_ms=float(fields["duration_ms"]),
            principal=_optional_text(fields["principal"]),
            session_id=_optional_text(fields["session_id"]),
            protocol=_text(fields["protocol"]),
            view=_optional_text(fields["view"]),
            worker=_text(fields["worker"]),
        )
    except (KeyError, TypeError, ValueError, OverflowError, OSError) as error:
        raise ValueError(f"not a call record: {error}") from None


def _integer(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"seq must be an integer, got {value!r}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


class CallSharing:
    """Publishes this worker's records on `TOPIC` and merges the other workers' into the log. `start()` on the
    server's loop (subscribing needs it), `stop()` when the server stops."""

    def __init__(self, calllog: CallLog, events: AppEvents, store: CallLogStore | None = None) -> None:
        self._calllog = calllog
        self._events = events
        self._store = store
        # how this worker's own events begin (`payload` puts the worker first): skipped unread (`merge` would too)
        self._own = json.dumps({"worker": calllog.worker}, ensure_ascii=False, separators=(",", ":"))[:-1] + ","
        self._subscription: Subscription | None = None
        self._detach: Callable[[], None] = lambda: None

    def start(self) -> None:
        if self._subscription is None:
            self._subscription = self._events.subscribe(TOPIC, self._received)
            self._detach = self._calllog.on_record(self._publish)

    def stop(self) -> None:
        if self._subscription is not None:
            self._detach()
            self._subscription.close()
            self._subscription = None

    async def catch_up(self) -> int:
        """Merge every worker's newest stored records into the log (a viewer opens); how many were new here."""
        if self._store is None or not self._store.is_open:
            return 0
        try:
            records = await self._store.load(self._calllog.size)
        except DATABASE_ERRORS as error:
            log.warning("the other workers' calls could not be read now (%s)", type(error).__name__)
            return 0
        return sum(self._calllog.merge(record) for record in records)

    def _publish(self, record: CallRecord) -> None:
        try:
            self._events.publish(TOPIC, payload(record))
        except (TypeError, ValueError):  # e.g. a NaN in the arguments: the record stays in this worker's log only
            log.warning("call %d (%s) not shared: its record is not JSON", record.seq, record.tool)

    def _received(self, event: Event) -> None:
        if event.text.startswith(self._own):
            return
        try:
            record = from_payload(event.payload)
        except ValueError as error:
            log.warning("an event on %s was dropped: %s", TOPIC, error)
            return
        self._calllog.merge(record)
