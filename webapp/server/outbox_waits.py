"""NiceGUI's outbox loops without their idle timeout.

Every NiceGUI client runs an outbox loop that waits for its wake-up event in `asyncio.wait_for(..., timeout=1.0)`
and starts the wait again when it times out. NiceGUI 3.18 sets that event for everything the loop acts on (an
update, a message, a rewind, `stop()`), so the timeout wakes an idle loop for nothing: on Python 3.11 each wake
creates and cancels a task. With 1,000 open views that was a fifth of a core while nothing happened, and an acting
call's own message waited ~20 ms behind those wake-ups. The loops here wait for the event alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from nicegui import outbox

__all__ = ["untimed_outbox_waits"]


class _AsyncioForOutboxes:
    """`asyncio` as `nicegui.outbox` sees it: the same module, but `wait_for` does not time out."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    async def wait_for(awaitable: Awaitable[Any], timeout: float | None = None) -> Any:
        return await awaitable


def untimed_outbox_waits() -> None:
    """Apply to every outbox loop started from now on (repeating it is harmless)."""
    names = outbox.__dict__
    if names["asyncio"] is asyncio:
        names["asyncio"] = _AsyncioForOutboxes()
