"""A call's confirmation in its tab: an invisible element in every attached tab whose update rides in the same socket
message as the call's element updates; the tab answers once it has applied them (one message to the tab, one answer
back). It counts what is queued for the tab: a call that queued nothing is not confirmed, and one that queued
messages (JavaScript, method calls), which NiceGUI sends after the updates, is confirmed by a round trip behind them.
Between the question and the answer the server is free: the bridge builds the call's result then."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from nicegui import Client, events, ui

from webapp.bridge.island import layout_part

__all__ = ["Confirmation", "confirmation", "round_trip"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_ENQUEUE = ("enqueue_update", "enqueue_delete", "enqueue_message")  # every way NiceGUI queues something for a tab
_SEND_TURNS = 8  # loop turns `sent` waits at most for the outbox


class Confirmation(ui.element, component="confirm.js"):
    """Create it in the tab's layout with `confirmation(client)`; `queued()` before a call, `ask(that)` after it,
    `sent()` while the change goes out (the caller may work meanwhile), then `answered(the answer)`."""

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

    def ask(self, mark: tuple[int, int], seconds: float) -> asyncio.Future[Any] | None:
        """Ask the tab to confirm everything queued for it since `mark`: its answer (for `answered`), None when
        nothing was queued. The question goes out with the call's updates (`sent` waits until they have)."""
        updates, messages = self._queued[0] - mark[0], self._queued[1] - mark[1]
        if messages:  # a JavaScript request behind the call's messages (NiceGUI's request must be awaited at once)
            return asyncio.ensure_future(self._javascript(seconds))
        if not updates:
            return None
        self._asked += 1  # the confirmation as an update of this element, in the same message as the call's updates
        answer = asyncio.get_running_loop().create_future()
        self._waiting[self._asked] = answer
        self._props["ask"] = self._asked
        self.update()
        return answer

    async def sent(self) -> None:
        """Return once the tab's outbox has sent what is queued (a few loop turns: its loop wakes, socket.io's
        writer writes), or after `_SEND_TURNS` turns."""
        outbox = self.client.outbox
        for _ in range(_SEND_TURNS):
            if not outbox.updates and not outbox.messages:
                break
            await asyncio.sleep(0)
        await asyncio.sleep(0)  # the socket's writer task

    async def answered(self, answer: asyncio.Future[Any], seconds: float) -> None:
        """Wait (at most `seconds`) for the answer `ask` returned."""
        try:
            async with asyncio.timeout(seconds):
                await answer
        except TimeoutError:
            log.warning("a tab did not confirm a change within %s s", seconds)
        finally:
            answer.cancel()  # a JavaScript request still running
            for asked, waiting in list(self._waiting.items()):
                if waiting is answer:
                    del self._waiting[asked]

    async def _javascript(self, seconds: float) -> None:
        await self.client.run_javascript("1", timeout=seconds)  # an expression: no eval retry

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
    return layout_part(client, Confirmation, Confirmation)


async def round_trip(
    tab: Confirmation | None, mark: tuple[int, int], seconds: float, value: T, finish: Callable[[T], Any] | None
) -> Any:
    """A call's end in its tab (`tab`: None without confirmation; `mark`: what was queued before the call): `value`,
    or `finish(value)` built while the tab applies the change, once the tab confirmed it (when the call sent it
    anything) within `seconds`."""
    answer = tab.ask(mark, seconds) if tab is not None else None
    if tab is None or answer is None:
        return value if finish is None else finish(value)
    try:
        if finish is not None:
            await tab.sent()
            value = finish(value)
    finally:
        await tab.answered(answer, seconds)
    return value
