"""The promises every fault test holds the workers to (apps.md §14.2), written once: what an agent was told against
what the database applied — acknowledged is applied, once each, and nothing applied went unacknowledged —, every
call answered within its deadline, and no view with a live tab on two workers for longer than `SPLIT_SECONDS`.

A `Ledger` records each booking an agent makes (a unique reason per booking, so its movement can be counted) and the
answers it got while retrying; `check()` holds it against the movements the database has.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Page

from webapp import open_database

__all__ = ["SPLIT_SECONDS", "Booking", "Ledger", "movements", "one_live_tab"]

SPLIT_SECONDS = 5.0  # the longest two workers may both show a view in a live tab
RETRYABLE = {"BRIDGE_UNAVAILABLE", "VIEW_UNAVAILABLE", "VIEW_TIMEOUT", "STORE_UNAVAILABLE", "SERVER_STOPPING"}
MOVED_NOTICE = "This view is now shown in another tab"


@dataclass
class Booking:
    """One booking, retried with its `_call_id` until answered: the codes it got and its slowest call (seconds)."""

    reason: str
    delta: int
    codes: list[str] = field(default_factory=lambda: [])
    slowest: float = 0.0

    @property
    def acknowledged(self) -> bool:
        return bool(self.codes) and self.codes[-1] == "OK"


@dataclass
class Ledger:
    """Every booking of a fault test, by reason."""

    deadline: float
    """Seconds any one call may take to answer."""
    bookings: dict[str, Booking] = field(default_factory=lambda: {})

    async def book(self, agent: Any, arguments: dict[str, Any], *, tries: int = 40, pause: float = 0.1) -> Any:
        """`inventory_adjust_stock` with `arguments` (a unique `reason`, a `_call_id`), retried on a retryable code as
        an agent does, and its last result; the booking's codes say whether it was acknowledged."""
        result = await self.call(agent, arguments)
        for _ in range(tries - 1):
            if self.codes(arguments["reason"])[-1] not in RETRYABLE:
                break
            await asyncio.sleep(pause)  # the agent's pause before its retry
            result = await self.call(agent, arguments)
        return result

    async def call(self, agent: Any, arguments: dict[str, Any]) -> Any:
        """One attempt of the booking `arguments` names (its `reason`), recorded; its result."""
        booking = self.bookings.setdefault(arguments["reason"], Booking(arguments["reason"], int(arguments["delta"])))
        started = time.monotonic()
        result = await agent.call_tool("inventory_adjust_stock", arguments)
        booking.slowest = max(booking.slowest, time.monotonic() - started)
        booking.codes.append(_code(result))
        return result

    def codes(self, reason: str) -> list[str]:
        return self.bookings[reason].codes

    def check(self, applied: Counter[str]) -> None:
        """Acknowledged = applied, once each; nothing applied that was not acknowledged; every call answered in time."""
        doubled = {reason: count for reason, count in applied.items() if reason in self.bookings and count > 1}
        lost = [reason for reason, booking in self.bookings.items() if booking.acknowledged and not applied[reason]]
        unacknowledged = [reason for reason, b in self.bookings.items() if not b.acknowledged and applied[reason]]
        late = {reason: round(b.slowest, 2) for reason, b in self.bookings.items() if b.slowest > self.deadline}
        assert not doubled and not lost and not unacknowledged and not late, (doubled, lost, unacknowledged, late)


def movements(db: Path | str, prefix: str) -> Counter[str]:
    """How many movements the database (a SQLite file or a Postgres URL) holds per booking reason that starts with
    `prefix`."""
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute(
            "SELECT reason, count(*) FROM inventory_movements WHERE reason LIKE ? GROUP BY reason", (prefix + "%",)
        ).fetchall()
    return Counter({str(reason): int(count) for reason, count in rows})


async def one_live_tab(first: Page, second: Page, *, within: float = SPLIT_SECONDS) -> float:
    """Two tabs of one view on two workers: within `within` seconds one of them (the older) says the view moved and
    the other still shows it; the seconds it took."""
    started = time.monotonic()
    while True:
        moved = [await page.get_by_text(MOVED_NOTICE).count() > 0 for page in (first, second)]
        if sum(moved) == 1:
            return time.monotonic() - started
        assert sum(moved) < 2, "both tabs of the view say it moved"
        assert time.monotonic() - started < within, f"two workers showed the view in a live tab for {within} s"
        await asyncio.sleep(0.1)


def _code(result: Any) -> str:
    if not result.is_error:
        return "OK"
    text = str(result.content[0].text)
    return text.split('code="', 1)[1].split('"', 1)[0] if 'code="' in text else "ERROR"
