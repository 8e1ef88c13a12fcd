"""One-time boot tickets (framework-owned table `webapp_boot_tickets`, apps.md §13 "Direct boot"): a shell whose host
blocks the nested frame fetches the embedded view page with one; any worker can redeem it, exactly once.

A ticket is 256 random bits handed out only in the opening result's `_meta` (and, for reloads, over the booted page's
own socket). The table keeps its SHA-256 digest, the view and principal it opens, and its expiry; redeeming it is one
compare-and-set (`used = 0` → `1` before the expiry), so two workers racing for one ticket cannot both win.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from webapp.core.database import FrameworkTable

__all__ = ["TICKET_TTL", "Redeemed", "TicketStore", "looks_like_ticket"]

TICKET_TTL = 60.0
"""Seconds a ticket stays redeemable after it was made (its first and only use must come within them)."""
_KEEP = 3600.0  # seconds a spent or expired ticket's row is kept, so a late second use still says "used"
_LENGTH = 43  # characters of `secrets.token_urlsafe(32)`
_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS webapp_boot_tickets (
    digest TEXT PRIMARY KEY,
    view TEXT NOT NULL,
    principal TEXT,
    expires {float} NOT NULL,
    used {int} NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS webapp_boot_tickets_by_expiry ON webapp_boot_tickets (expires)",
)


def looks_like_ticket(value: str) -> bool:
    """Whether `value` has a ticket's shape (43 URL-safe base64 characters); says nothing about its validity."""
    return len(value) == _LENGTH and set(value) <= _ALPHABET


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Redeemed:
    """What a ticket was for (`ok`), or why it opens nothing: `used`, `expired` or `unknown` (with the view it was
    for when the row still exists, so the answer can link it)."""

    outcome: Literal["ok", "used", "expired", "unknown"]
    view: str | None = None
    principal: str | None = None


class TicketStore(FrameworkTable):
    """Makes and redeems boot tickets in the app's database (every write commits at once, on the store's thread)."""

    schema = _SCHEMA

    def __init__(self, target: Path | str, *, ttl: float = TICKET_TTL) -> None:
        super().__init__(target)
        self.ttl = ttl

    async def make(self, view: str, principal: str | None, *, now: float | None = None) -> str:
        """A fresh ticket for the view with handle `view`, redeemable once within `ttl` seconds by anyone holding it
        (the page it opens belongs to `principal`)."""
        now = time.time() if now is None else now
        ticket = secrets.token_urlsafe(32)
        await self._run(self._insert, _digest(ticket), view, principal, now)
        return ticket

    async def redeem(self, ticket: str, *, now: float | None = None) -> Redeemed:
        """Spend `ticket` (compare-and-set): `ok` with its view and principal the first time within its life, else
        why not."""
        now = time.time() if now is None else now
        if not looks_like_ticket(ticket):
            return Redeemed("unknown")
        return await self._run(self._spend, _digest(ticket), now)

    # -- on the store's thread -------------------------------------------------------------------------------------
    def _insert(self, digest: str, view: str, principal: str | None, now: float) -> None:
        self._open()  # a no-op once open at start; a server used without starting (tests) opens it here
        db = self._conn
        db.execute("DELETE FROM webapp_boot_tickets WHERE expires < ?", (now - _KEEP,))
        db.execute(
            "INSERT INTO webapp_boot_tickets (digest, view, principal, expires, used) VALUES (?, ?, ?, ?, 0)",
            (digest, view, principal, now + self.ttl),
        )

    def _spend(self, digest: str, now: float) -> Redeemed:
        self._open()
        db = self._conn
        spent = db.execute(
            "UPDATE webapp_boot_tickets SET used = 1 WHERE digest = ? AND used = 0 AND expires >= ?", (digest, now)
        )
        row = db.execute(
            "SELECT view, principal, expires, used FROM webapp_boot_tickets WHERE digest = ?", (digest,)
        ).fetchone()
        if row is None:
            return Redeemed("unknown")
        view, principal = str(row[0]), None if row[1] is None else str(row[1])
        if spent.rowcount == 1:
            return Redeemed("ok", view, principal)
        return Redeemed("used" if row[3] else "expired", view, principal)
