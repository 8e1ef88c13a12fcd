"""How the inventory view writes numbers, money and times for people (the agent gets raw figures)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["money", "signed", "units", "when"]


def units(value: int) -> str:
    """`12345` → `12,345`."""
    return f"{value:,}"


def signed(value: int) -> str:
    """A movement's delta with its sign: `+5`, `−3` (a real minus sign)."""
    return f"+{value:,}" if value > 0 else f"−{-value:,}"


def money(cents: int) -> str:
    """`123456` → `€1,234.56`."""
    sign = "−" if cents < 0 else ""
    euros, rest = divmod(abs(cents), 100)
    return f"{sign}€{euros:,}.{rest:02d}"


def when(at: datetime, now: datetime | None = None) -> str:
    """A short time: `14:05` today, `12 Mar 09:30` before."""
    now = now or datetime.now(UTC)
    local = at.astimezone(UTC)
    if local.date() == now.astimezone(UTC).date():
        return local.strftime("%H:%M")
    return local.strftime("%d %b %H:%M")
