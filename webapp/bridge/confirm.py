"""A call's confirmation in its tab: an invisible element in every attached tab whose update rides in the same socket
message as the call's element updates; the tab answers once it has applied them (one message to the tab, one answer
back). It counts what is queued for the tab: a call that queued nothing is not confirmed, and one that queued
messages (JavaScript, method calls), which NiceGUI sends after the updates, is confirmed by a round trip behind them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from nicegui import Client, events, ui

from webapp.bridge.island import Island

__all__ = ["Confirmation", "confirmation"]

log = logging.getLogger(__name__)
_ENQUEUE = ("enqueue_update", "enqueue_delete", "enqueue_message")  # every way NiceGUI queues something for a tab


class Confirmation(ui.element, component="confirm.js"):
    """Create it in the tab's layout with `confirmation(client)`; `queued()` before a call, `confirm(that)` after."""

    def __init__(self) -> None:
        super().__init__()
        self._update_method = "confirm"  # nicegui.js calls it after applying the update (the DOM patched)
        self._asked = 0
        self._waiting: dict[int, asyncio.Future[None]] = {}
        self._queued = [0, 0]  # element updates and deletions; messages
        self.on("confirmed", self._confirmed)
        self.client.on_delete(self._release)
        outbox = self.client.outbox
        for name in _ENQUEUE:  # counted where they are queued: a message already in flight counts too
            setattr(outbox, name, self._counted(getattr(outbox, name), 1 if name == "enqueue_message" else 0))

    def queued(self) -> tuple[int, int]:
        """What has been queued for the tab so far."""
        return self._queued[0], self._queued[1]

    async def confirm(self, mark: tuple[int, int], seconds: float) -> None:
        """Wait (at most `seconds`) until the tab has applied everything queued for it since `mark`, if anything."""
        updates, messages = self._queued[0] - mark[0], self._queued[1] - mark[1]
        if messages:
            await self._round_trip(seconds)
        elif updates:
            await self._ask(seconds)

    async def _round_trip(self, seconds: float) -> None:
        """A JavaScript request queued behind the call's messages (awaited inside a coroutine: NiceGUI's
        AwaitableResponse must be awaited at once)."""

        async def ask() -> object:
            return await self.client.run_javascript("1", timeout=seconds)  # an expression: no eval retry

        try:
            async with asyncio.timeout(seconds):
                await ask()
        except TimeoutError:
            log.warning("a tab did not confirm a change within %s s", seconds)

    async def _ask(self, seconds: float) -> None:
        """The confirmation as an update of this element, in the same message as the call's updates."""
        self._asked += 1
        asked = self._asked
        answer = asyncio.get_running_loop().create_future()
        self._waiting[asked] = answer
        self._props["ask"] = asked
        self.update()
        try:
            async with asyncio.timeout(seconds):
                await answer
        except TimeoutError:
            log.warning("a tab did not confirm a change within %s s", seconds)
        finally:
            self._waiting.pop(asked, None)

    def _counted(self, enqueue: Callable[..., None], kind: int) -> Callable[..., None]:
        def counted(*args: Any) -> None:
            self._queued[kind] += 1
            enqueue(*args)

        return counted

    def _confirmed(self, event: events.GenericEventArguments) -> None:
        answer = self._waiting.get(event.args) if isinstance(event.args, int) else None
        if answer is not None and not answer.done():
            answer.set_result(None)

    def _release(self) -> None:
        """The tab is gone: nobody waits for it any longer."""
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_result(None)


def confirmation(client: Client) -> Confirmation:
    """The tab's Confirmation, created in its layout (outside the content a rebuild clears) on first use."""
    for island in client.layout.default_slot.children:
        if isinstance(island, Island):
            for child in island.default_slot.children:
                if isinstance(child, Confirmation):
                    return child
    with client.layout, Island().classes("hidden"):
        return Confirmation()
