"""The feed of recent movements in the warehouse, each marked as made by an agent or a person."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from nicegui import ui

from actions.domain import Movement
from views.inventory.calls import BrowserCalls, encode_arguments, keep
from views.inventory.format import signed, units, when

__all__ = ["MovementFeed"]

_ACTORS = {
    "agent": ("smart_toy", "Agent", "bg-violet-100 text-violet-700"),
    "person": ("person", "Person", "bg-sky-100 text-sky-700"),
}


class _FeedList(ui.element, component="feed.js"):
    """The feed's element: its rows are data (the `rows` prop, dicts of `_row`), drawn by feed.js."""


def _row(movement: Movement) -> dict[str, Any]:
    icon, label, color = _ACTORS[movement.actor]
    return {
        "id": movement.id,
        "actor": movement.actor,
        "icon": icon,
        "label": label,
        "color": color,
        "tone": "text-emerald-600" if movement.delta > 0 else "text-rose-600",
        "sku": movement.sku,
        "delta": signed(movement.delta),
        "after": units(movement.on_hand_after),
        "reason": movement.reason,
        "time": when(movement.at),
    }


@functools.lru_cache(maxsize=64)
def _new_rows(movements: tuple[Movement, ...]) -> tuple[tuple[dict[str, Any], ...], str]:
    """A change's movements as rows, newest first, and `prepend`'s arguments encoded: made once for every view of the
    warehouse (never mutated)."""
    rows = tuple(_row(movement) for movement in reversed(movements))
    return rows, encode_arguments(rows)


class MovementFeed:
    """Newest first, at most `size` rows. A change sends only its new rows (`add`); the tab drops the oldest.

    The rows prop is a tuple: NiceGUI wraps the lists and dicts put into props in observable copies, which for a
    feed changed in every watching view cost more than the rest of the change."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.list = _FeedList().classes("inventory-feed w-full").props('data-testid="movement-feed"')
        self.list.props["size"] = size
        self.list.props["rows"] = ()

    def show(self, movements: Sequence[Movement]) -> None:
        """Show exactly these movements (newest first)."""
        rows = tuple(_row(movement) for movement in movements[: self.size])
        if [row["id"] for row in rows] != self._ids():
            self.list.props["rows"] = rows

    def add(self, movements: tuple[Movement, ...], calls: BrowserCalls) -> None:
        """New movements (oldest first, as a change lists them) on top of the rows shown, sent with the change."""
        shown = set(self._ids())
        rows, arguments = _new_rows(movements)
        fresh = [row for row in rows if row["id"] not in shown]
        if fresh:
            keep(self.list, "rows", (*fresh, *self.list.props["rows"])[: self.size])
            calls.encoded(self.list, "prepend", arguments if len(fresh) == len(rows) else encode_arguments(fresh))

    def _ids(self) -> list[int]:
        return [row["id"] for row in self.list.props["rows"]]
