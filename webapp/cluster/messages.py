"""The messages workers send each other through their inboxes, one kind each, defined here once: a JSON object with
`kind`, the request's `id` and the kind's own fields.

A request carries the time it has left (`ttl`, seconds), never a wall-clock deadline: the workers' clocks need not
agree, and each side counts on its own monotonic clock from the moment it sent or received the request.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import orjson

__all__ = ["Kind", "encode"]


class Kind(StrEnum):
    """What an inbox message is."""

    CALL = "call"
    """A request: `reply_to` (the asking worker), `ttl`, `body`, `progress` when the caller wants reports, and `log`
    (the least level) when it wants log messages. A call that asks its client answers so in its REPLY (the caller's
    next round carries the answers); resource changes travel as app events (`webapp.server.changes`)."""
    ACK = "ack"
    """The owner got a call (sent before it runs it): the caller stops waiting for a sign of life."""
    PROGRESS = "progress"
    """A progress report of a call: `progress`, `total`, `message`; sent before the reply."""
    REPLY = "reply"
    """A call's answer: `body`. Resent on purpose when Redis did not take it: the caller takes the first."""
    PING = "ping"
    """Counts an inbox's readers (SPUBLISH's answer); its worker ignores it."""
    TAKEN = "taken"
    """A view this worker's tab held was claimed by another worker's tab (`target`: its digest; `by`, `epoch`)."""
    LOG = "log"
    """A forwarded call's log message for its caller's client: `level`, `data`, `logger`; sent before the reply."""


def encode(kind: Kind, **fields: Any) -> bytes:
    """A message of `kind` with `fields`, as the bytes an inbox carries."""
    return orjson.dumps({"kind": kind.value, **fields})
