"""The figures and checks of `bench.faults`: a table per fault (calls, latencies, the first success after it, when
the tabs agreed, the error codes), and the audit of the database against what the agents were told."""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass

from bench.support.faults import Agents, Attempt
from bench.support.latency import percentile
from webapp import open_database

__all__ = ["AFTER", "ANSWER_WITHIN", "Fault", "audit", "report", "stock"]

AFTER = 2.0  # seconds after a fault is undone that still count as during it
ANSWER_WITHIN = 10.0  # seconds any one call may take to answer


@dataclass
class Fault:
    kind: str
    injected: float
    restored: float = 0.0
    tabs: float = float("inf")  # seconds from `restored` until every tab showed the database's figures


def stock(db: str, skus: list[str]) -> dict[tuple[str, str], int]:
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute("SELECT warehouse, sku, on_hand FROM inventory_stock").fetchall()
    return {(w, s): int(n) for w, s, n in rows if s in skus}


def report(faults: list[Fault], attempts: list[Attempt], kinds: tuple[str, ...]) -> None:
    def during(attempt: Attempt, fault: Fault) -> bool:
        return fault.injected <= attempt.started <= fault.restored + AFTER

    print(f"{'fault':<17} {'n':>2} {'calls':>6} {'p50 ms':>7} {'p99 ms':>8} {'1st ok s':>8} {'tabs s':>6}  errors")
    inside: set[int] = set()
    for kind in kinds:
        mine = [fault for fault in faults if fault.kind == kind]
        seen = [a for a in attempts if any(during(a, fault) for fault in mine)]
        inside.update(id(a) for a in seen)
        first = [
            min((a.started + a.ms / 1000 for a in attempts if a.code == "OK" and a.started >= f.injected), default=0.0)
            - f.injected
            for f in mine
        ]
        codes = Counter(a.code for a in seen if a.code != "OK")
        ms = [a.ms for a in seen] or [0.0]
        worst_tabs = max((f.tabs for f in mine), default=0.0)
        errors = ", ".join(f"{code} {count}" for code, count in codes.most_common()) or "none"
        row = f"{kind:<17} {len(mine):>2} {len(seen):>6} {percentile(ms, 0.5):>7.1f} {percentile(ms, 0.99):>8.1f}"
        print(f"{row} {max(first, default=0.0):>8.2f} {worst_tabs:>6.2f}  {errors}")
    calm = [a.ms for a in attempts if id(a) not in inside] or [0.0]
    print(f"{'outside faults':<17} {'':>2} {len(calm):>6} {percentile(calm, 0.5):>7.1f} {percentile(calm, 0.99):>8.1f}")
    longest = max(attempts, key=lambda attempt: attempt.ms, default=None)
    if longest is not None:
        print(f"the longest call: {longest.ms / 1000:.2f} s ({longest.code}; target ≤ {ANSWER_WITHIN:g} s)")


def audit(db: str, agents: Agents, first_movement: int, before: dict[tuple[str, str], int]) -> list[str]:
    """What went wrong in the database, compared with what the agents were told."""
    missed: list[str] = []
    unacked = [b for b in agents.bookings if not b.acked]
    with contextlib.closing(open_database(db)) as conn:
        rows = conn.execute(
            "SELECT reason FROM inventory_movements WHERE id > ? AND reason LIKE 'bench %'", (first_movement,)
        ).fetchall()
        (transfers,) = conn.execute(
            "SELECT count(*) FROM inventory_movements WHERE id > ? AND reason LIKE 'Transfer %'", (first_movement,)
        ).fetchone()
    booked = Counter(str(reason).removeprefix("bench ") for (reason,) in rows)
    adjusts = [b for b in agents.bookings if b.kind == "adjust"]
    lost = [b.call_id for b in adjusts if b.acked and booked[b.call_id] == 0]
    doubled = [b.call_id for b in adjusts if booked[b.call_id] > 1]
    applied_unacked = [b.call_id for b in adjusts if not b.acked and booked[b.call_id] > 0]
    moved = 2 * sum(1 for b in agents.bookings if b.kind == "transfer" and b.acked)
    expected = dict(before)
    for booking in agents.bookings:
        if booking.acked:
            for key, units in booking.effect.items():
                expected[key] += units
    after = stock(db, sorted({sku for _, sku in before}))
    print(
        f"bookings {len(agents.bookings)} ({len(adjusts)} adjustments, {moved // 2} transfers), acknowledged "
        f"{len(agents.bookings) - len(unacked)}; lost {len(lost)}, doubled {len(doubled)}, applied but "
        f"unacknowledged {len(applied_unacked)}; transfer movements {transfers} of {moved}; stock as acknowledged: "
        f"{'yes' if after == expected else 'NO'}"
    )
    checks = [
        (not unacked, f"{len(unacked)} booking(s) never acknowledged"),
        (not lost, f"lost: {lost[:5]}"),
        (not doubled, f"doubled: {doubled[:5]}"),
        (not applied_unacked, f"applied but unacknowledged: {applied_unacked[:5]}"),
        (transfers == moved, f"transfer movements {transfers}, acknowledged {moved}"),
        (after == expected, "the stock differs from what the agents were told"),
    ]
    missed += [why for ok, why in checks if not ok]
    return missed
