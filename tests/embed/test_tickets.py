"""Boot tickets (apps.md §13): one-time, short-lived, bound to a view and principal, stored as digests and spent by
compare-and-set, so exactly one of several workers sharing the database redeems a ticket — on SQLite and Postgres.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator

import pytest

from webapp.core.sql import open_database
from webapp.embed import TicketStore
from webapp.embed.tickets import TICKET_TTL, looks_like_ticket


@pytest.fixture
def stores(database: str) -> Iterator[tuple[TicketStore, TicketStore]]:
    """Two stores on one database, as two workers hold them."""
    one, two = TicketStore(database), TicketStore(database)
    one.open()
    two.open()
    try:
        yield one, two
    finally:
        one.close()
        two.close()


def test_a_ticket_opens_its_view_once_on_any_worker(stores: tuple[TicketStore, TicketStore]) -> None:
    one, two = stores
    ticket = one.make("view-handle", "alice")
    assert looks_like_ticket(ticket)
    first = two.redeem(ticket)
    assert (first.outcome, first.view, first.principal) == ("ok", "view-handle", "alice")
    again = one.redeem(ticket)
    assert (again.outcome, again.view) == ("used", "view-handle")  # the answer can still link the view
    assert two.make("view-handle", None) != ticket


def test_a_ticket_expires_a_minute_after_it_was_made(stores: tuple[TicketStore, TicketStore]) -> None:
    one, _ = stores
    assert TICKET_TTL <= 60
    ticket = one.make("view-handle", None, now=1000.0)
    assert one.redeem(ticket, now=1000.0 + TICKET_TTL + 0.5).outcome == "expired"
    assert one.redeem(ticket, now=1000.0 + 1).outcome == "ok"  # never spent by the late attempt


@pytest.mark.parametrize("value", ["", "x" * 43, "short", "y" * 43 + "?", "../" * 15])
def test_anything_else_opens_nothing(stores: tuple[TicketStore, TicketStore], value: str) -> None:
    one, _ = stores
    assert one.redeem(value).outcome == "unknown"


def test_the_database_keeps_only_digests(database: str, stores: tuple[TicketStore, TicketStore]) -> None:
    one, _ = stores
    ticket = one.make("view-handle", "alice")
    db = open_database(database)
    try:
        rows = db.execute("SELECT digest, view, principal, used FROM webapp_boot_tickets").fetchall()
    finally:
        db.close()
    assert [tuple(row) for row in rows] == [(hashlib.sha256(ticket.encode()).hexdigest(), "view-handle", "alice", 0)]
    assert all(ticket not in str(value) for row in rows for value in row)


def test_racing_workers_spend_a_ticket_exactly_once(stores: tuple[TicketStore, TicketStore]) -> None:
    one, two = stores
    tickets = [one.make(f"view-{n}", None) for n in range(20)]
    wins: list[str] = []
    start = threading.Barrier(2, timeout=10)

    def spend(store: TicketStore) -> None:
        start.wait()
        wins.extend(ticket for ticket in tickets if store.redeem(ticket).outcome == "ok")

    racers = [threading.Thread(target=spend, args=(store,)) for store in (one, two)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(30)
    assert sorted(wins) == sorted(tickets)  # each ticket won once, by one of the two
