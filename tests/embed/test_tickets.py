"""Boot tickets (apps.md §13): one-time, short-lived, bound to a view and principal, stored as digests and spent by
compare-and-set, so exactly one of several workers sharing the database redeems a ticket — on SQLite and Postgres.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from webapp.core.sql import open_database
from webapp.embed import TicketStore
from webapp.embed.tickets import TICKET_TTL, looks_like_ticket


@pytest_asyncio.fixture(loop_scope="session")
async def stores(database: str) -> AsyncIterator[tuple[TicketStore, TicketStore]]:
    """Two stores on one database, as two workers hold them (each on a connection and a thread of its own)."""
    one, two = TicketStore(database), TicketStore(database)
    await one.open()
    await two.open()
    try:
        yield one, two
    finally:
        await one.close()
        await two.close()


async def test_a_ticket_opens_its_view_once_on_any_worker(stores: tuple[TicketStore, TicketStore]) -> None:
    one, two = stores
    ticket = await one.make("view-handle", "alice")
    assert looks_like_ticket(ticket)
    first = await two.redeem(ticket)
    assert (first.outcome, first.view, first.principal) == ("ok", "view-handle", "alice")
    again = await one.redeem(ticket)
    assert (again.outcome, again.view) == ("used", "view-handle")  # the answer can still link the view
    assert await two.make("view-handle", None) != ticket


async def test_a_ticket_expires_a_minute_after_it_was_made(stores: tuple[TicketStore, TicketStore]) -> None:
    one, _ = stores
    assert TICKET_TTL <= 60
    ticket = await one.make("view-handle", None, now=1000.0)
    assert (await one.redeem(ticket, now=1000.0 + TICKET_TTL + 0.5)).outcome == "expired"
    assert (await one.redeem(ticket, now=1000.0 + 1)).outcome == "ok"  # never spent by the late attempt


@pytest.mark.parametrize("value", ["", "x" * 43, "short", "y" * 43 + "?", "../" * 15])
async def test_anything_else_opens_nothing(stores: tuple[TicketStore, TicketStore], value: str) -> None:
    one, _ = stores
    assert (await one.redeem(value)).outcome == "unknown"


async def test_the_database_keeps_only_digests(database: str, stores: tuple[TicketStore, TicketStore]) -> None:
    one, _ = stores
    ticket = await one.make("view-handle", "alice")
    db = open_database(database)
    try:
        rows = db.execute("SELECT digest, view, principal, used FROM webapp_boot_tickets").fetchall()
    finally:
        db.close()
    assert [tuple(row) for row in rows] == [(hashlib.sha256(ticket.encode()).hexdigest(), "view-handle", "alice", 0)]
    assert all(ticket not in str(value) for row in rows for value in row)


async def test_racing_workers_spend_a_ticket_exactly_once(stores: tuple[TicketStore, TicketStore]) -> None:
    one, two = stores
    tickets = [await one.make(f"view-{n}", None) for n in range(20)]

    async def spend(store: TicketStore) -> list[str]:  # its statements race the other store's on their two threads
        spent = await asyncio.gather(*(store.redeem(ticket) for ticket in tickets))
        return [ticket for ticket, redeemed in zip(tickets, spent, strict=True) if redeemed.outcome == "ok"]

    wins = [ticket for won in await asyncio.gather(spend(one), spend(two)) for ticket in won]
    assert sorted(wins) == sorted(tickets)  # each ticket won once, by one of the two
