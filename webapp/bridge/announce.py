"""What an agent changes, said to a person who uses a screen reader: a polite live region in every view's tab. The
first change after a quiet time is said in words at once; the changes that follow are summed up, at most one
announcement every `QUIET` seconds. Routine news never interrupts (no `role=alert`) and never takes the focus."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from nicegui import Client, ui

from webapp.bridge.confirm import confirmation
from webapp.bridge.island import layout_part

__all__ = ["QUIET", "Announcer", "announced", "announcer", "words_of"]

T = TypeVar("T")

QUIET = 2.0
"""Seconds between two announcements (and the quiet after which a change is said in words)."""


def words_of(app: str, tool: str) -> str:
    """A tool's name as words a person hears: `inventory_adjust_stock` of `inventory` is "adjust stock"."""
    if tool == app:
        return "opened it again"
    return tool.removeprefix(f"{app}_").replace("_", " ")


class Announcer(ui.label):
    """The live region (`role=status`, polite, read whole), visually hidden."""

    def __init__(self) -> None:
        super().__init__("")
        self.props('role=status aria-live=polite aria-atomic=true data-testid="agent-announcement"')
        self.classes("sr-only")
        self._said = 0.0  # when the last announcement was made (monotonic)
        self._untold = 0  # changes made since, not said yet
        self._summing: asyncio.TimerHandle | None = None

    def agent_changed(self, words: str) -> None:
        """An agent changed the view (`words`: what it did): said now after a quiet time, else summed up later."""
        now = time.monotonic()
        if now - self._said >= QUIET and self._summing is None:
            self._say(f"The agent changed the view: {words}.")
            return
        self._untold += 1
        if self._summing is None:
            self._summing = asyncio.get_running_loop().call_at(
                asyncio.get_running_loop().time() + max(self._said + QUIET - now, 0.0), self._sum_up
            )

    def _sum_up(self) -> None:
        self._summing = None
        if self._untold and not self.is_deleted:
            count, self._untold = self._untold, 0
            self._say(f"The agent made {count} more change{'' if count == 1 else 's'}.")

    def _say(self, text: str) -> None:
        self._said = time.monotonic()
        self.set_text(text)


def announcer(client: Client) -> Announcer:
    """The tab's Announcer, created in its layout (outside the content a rebuild clears) on first use."""
    return layout_part(client, Announcer, Announcer, hidden=False)  # read out: not display:none


class _View(Protocol):
    @property
    def client(self) -> Client | None: ...


def announced(handler: Callable[[Any], Awaitable[T]], view: _View, words: str) -> Callable[[Any], Awaitable[T]]:
    """`handler`, then, when it changed what the tab shows, the change said in the tab (in the change's own message:
    the handler's updates and the announcement go out together)."""

    async def run(instance: Any) -> T:
        client = view.client
        before = confirmation(client).queued() if client is not None else None
        value = await handler(instance)
        if client is not None and not client.is_deleted and confirmation(client).queued() != before:
            announcer(client).agent_changed(words)  # only a call that changed what the tab shows
        return value

    return run
