"""The call log: a bounded in-memory record of every MCP tool call, with secrets masked, and a live feed.

Secrets (attach keys, view handles, session ids, tokens) are masked to their first 6 characters + `…` before a
record is stored: in the arguments, the result blocks' wire text, the structured content and the caller fields.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import mcp_types

from webapp.calllog.masking import Masker, mask_secret
from webapp.core.context import Caller

__all__ = [
    "CallKey",
    "CallLog",
    "CallRecord",
    "Subscription",
    "clip",
    "note_routed_view",
]

log = logging.getLogger(__name__)
CLIP_STRING = 4096  # characters of an argument or structured string a record keeps
CLIP_ITEMS = 200  # items of an array or object a record keeps
CLIP_DEPTH = 16  # levels of nesting a record keeps
CLIP_BLOCK = 65_536  # characters of a result block a record keeps


_ROUTED_VIEW: contextvars.ContextVar[str | None] = contextvars.ContextVar("webapp_routed_view", default=None)


def note_routed_view(handle: str) -> None:
    """Name the view the current call was routed to (the bridge does); its record then shows it, masked."""
    _ROUTED_VIEW.set(handle)


CallKey = tuple[str, int]
"""What names a record among every worker's: (worker, seq)."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call as stored (every secret already masked). `seq` counts the calls of its `worker` ("" for one
    process without `--redis-url`)."""

    seq: int
    time: datetime
    tool: str
    arguments: dict[str, Any]
    blocks: tuple[str, ...]
    is_error: bool
    structured_content: dict[str, Any] | None
    duration_ms: float
    principal: str | None
    session_id: str | None
    protocol: str
    view: str | None = None
    worker: str = ""

    @property
    def key(self) -> CallKey:
        return (self.worker, self.seq)

    @property
    def order(self) -> tuple[datetime, str, int]:
        """How records of several workers sort: by time, ties by worker and seq."""
        return (self.time, self.worker, self.seq)


class Subscription:
    """A live feed of new records: `async for record in subscription`; close it (or use `with`) when done.

    The feed is bounded: a subscriber that falls behind loses the oldest records it has not read.
    """

    def __init__(self, log_: CallLog, size: int) -> None:
        self._log = log_
        self._queue: asyncio.Queue[CallRecord | None] = asyncio.Queue(maxsize=size)
        self.dropped = 0

    def _push(self, record: CallRecord | None) -> None:
        if self._queue.full():
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(record)

    async def get(self) -> CallRecord | None:
        """The next record, or None once the subscription is closed."""
        return await self._queue.get()

    def close(self) -> None:
        self._log._unsubscribe(self)  # pyright: ignore[reportPrivateUsage]
        self._push(None)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __aiter__(self) -> AsyncIterator[CallRecord]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[CallRecord]:
        while (record := await self._queue.get()) is not None:
            yield record


class CallLog:
    """Every MCP tool call, newest last; bounded to `size` records. With several workers it records this `worker`'s
    calls and may hold other workers' records too (`merge`)."""

    def __init__(self, size: int = 1000, feed_size: int = 1000, *, worker: str = "") -> None:
        self.worker = worker
        self._records: deque[CallRecord] = deque(maxlen=size)
        self._keys: set[CallKey] = set()
        self._feed_size = feed_size
        self._subscriptions: list[Subscription] = []
        self._listeners: list[Callable[[CallRecord], None]] = []
        self._seq = itertools.count(1)
        self._next_seq = 1
        self.masker = Masker()

    def add_secret(self, secret: str | None) -> None:
        """Register a secret (attach key, view handle, session id, token): it is masked wherever it appears."""
        self.masker.add(secret)

    def discard_secret(self, secret: str) -> None:
        self.masker.discard(secret)

    @property
    def size(self) -> int:
        """How many records are kept in memory."""
        return self._records.maxlen or 0

    def records(self) -> list[CallRecord]:
        return list(self._records)

    def restore(self, records: Iterable[CallRecord], *, last_seq: int = 0) -> None:
        """Put earlier (already masked) records back, e.g. loaded from the database; new records are numbered after
        this worker's among them and after `last_seq`. Subscribers and listeners are not told."""
        known = {record.key: record for record in [*records, *self._records]}
        newest = sorted(known.values(), key=lambda record: record.order)[-self.size :]
        self._records.clear()
        self._records.extend(newest)
        self._keys = {record.key for record in newest}
        last = max((record.seq for record in newest if record.worker == self.worker), default=0)
        self._seq = itertools.count(max(last, last_seq, self._next_seq - 1) + 1)

    def merge(self, record: CallRecord) -> bool:
        """Add another worker's record (already masked and stored by that worker) and feed it to subscribers, not to
        listeners; a record of this worker or one already here is ignored. Whether it was added."""
        if record.worker == self.worker or record.key in self._keys:
            return False
        self._append(record)
        for subscription in list(self._subscriptions):
            subscription._push(record)  # pyright: ignore[reportPrivateUsage]
        return True

    def _append(self, record: CallRecord) -> None:
        if len(self._records) == self.size:
            self._keys.discard(self._records[0].key)
        self._records.append(record)
        self._keys.add(record.key)

    def __len__(self) -> int:
        return len(self._records)

    def followed(self) -> bool:
        """Whether a live feed (a viewer tab) follows this log now."""
        return bool(self._subscriptions)

    def subscribe(self) -> Subscription:
        """A live feed of the records added from now on."""
        subscription = Subscription(self, self._feed_size)
        self._subscriptions.append(subscription)
        return subscription

    def on_record(self, listener: Callable[[CallRecord], None]) -> Callable[[], None]:
        """Call `listener(record)` for every new record (e.g. to persist it); returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _unsubscribe(self, subscription: Subscription) -> None:
        with contextlib.suppress(ValueError):
            self._subscriptions.remove(subscription)

    def record(
        self,
        *,
        tool: str,
        arguments: Mapping[str, Any] | None,
        result: mcp_types.CallToolResult,
        caller: Caller,
        duration: float,
        view: str | None = None,
        time: datetime | None = None,
    ) -> CallRecord:
        """Store one call (`duration` in seconds) and feed it to subscribers and listeners."""
        self.add_secret(caller.session_id if caller.session_id != "stdio" else None)
        masked = self.masker
        args = dict(arguments or {})
        structured = result.structured_content
        if isinstance(view_out := (structured or {}).get("view"), str):
            self.add_secret(view_out)  # a handle the server minted for this caller
        routed = _ROUTED_VIEW.get()
        _ROUTED_VIEW.set(None)
        view = view or routed or _view_of(args, structured)
        seq = next(self._seq)
        self._next_seq = seq + 1
        record = CallRecord(
            seq=seq,
            time=time or datetime.now(UTC),
            tool=tool,
            arguments=masked.value(clip(args)),
            blocks=tuple(masked.text(_clip_block(text)) for text in _texts(result.content)),
            is_error=bool(result.is_error),
            structured_content=masked.value(clip(structured)) if structured is not None else None,
            duration_ms=round(duration * 1000, 3),
            principal=caller.principal,
            session_id=masked.text(caller.session_id) if caller.session_id else None,
            protocol=caller.protocol,
            view=mask_secret(view) if view else None,
            worker=self.worker,
        )
        self._append(record)
        for subscription in list(self._subscriptions):
            subscription._push(record)  # pyright: ignore[reportPrivateUsage]
        for listener in list(self._listeners):
            try:
                listener(record)
            except Exception:
                log.exception("a call-log listener failed")
        return record


def clip(value: Any, depth: int = 0) -> Any:
    """A copy of a JSON-like value cut to the record limits (long strings, long arrays and objects, deep nesting),
    each cut marked with `…` and the original size, so one huge call cannot bloat the log."""
    if isinstance(value, str):
        return value if len(value) <= CLIP_STRING else f"{value[:CLIP_STRING]}… ({len(value)} characters)"
    if not isinstance(value, Mapping | list | tuple):
        return value
    if depth >= CLIP_DEPTH:
        return "… (nested too deep)"
    if isinstance(value, Mapping):
        items = list(value.items())  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
        kept = {clip(str(key), depth + 1): clip(item, depth + 1) for key, item in items[:CLIP_ITEMS]}
        if len(items) > CLIP_ITEMS:
            kept["…"] = f"{len(items) - CLIP_ITEMS} more properties"
        return kept
    kept_items = [clip(item, depth + 1) for item in value[:CLIP_ITEMS]]  # pyright: ignore[reportUnknownVariableType]
    if len(value) > CLIP_ITEMS:  # pyright: ignore[reportUnknownArgumentType]
        kept_items.append(f"… {len(value) - CLIP_ITEMS} more items")  # pyright: ignore[reportUnknownArgumentType]
    return kept_items


def _clip_block(text: str) -> str:
    return text if len(text) <= CLIP_BLOCK else f"{text[:CLIP_BLOCK]}\n… ({len(text)} characters)"


def _texts(content: Iterable[mcp_types.ContentBlock]) -> list[str]:
    texts: list[str] = []
    for block in content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        else:
            texts.append(f"[{block.type} block]")
    return texts


def _view_of(arguments: Mapping[str, Any], structured: Mapping[str, Any] | None) -> str | None:
    for source in (arguments.get("_view"), (structured or {}).get("view")):
        if isinstance(source, str) and source:
            return source
    return None
