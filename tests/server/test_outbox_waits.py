"""NiceGUI's outbox loops wait for their wake-up event without a timeout once the server adapted them."""

from __future__ import annotations

import asyncio

from nicegui import outbox

from webapp.server.outbox_waits import untimed_outbox_waits


async def test_the_outbox_wait_lasts_until_the_event_and_the_rest_of_asyncio_is_unchanged() -> None:
    untimed_outbox_waits()
    untimed_outbox_waits()  # twice is harmless
    seen = outbox.__dict__["asyncio"]  # the module as nicegui.outbox sees it
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(0.2, event.set)
    await seen.wait_for(event.wait(), timeout=0.01)  # NiceGUI's loop passes 1.0: not a deadline here
    assert event.is_set()
    assert seen.Event is asyncio.Event and seen.sleep is asyncio.sleep
