"""The feed of recent movements in the warehouse, each marked as made by an agent or a person."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from nicegui import ui

from actions.domain import Movement
from views.inventory.calls import BrowserCalls, Call, encode_arguments, keep
from views.inventory.format import signed, units, when

__all__ = ["FeedRows", "MovementFeed"]


class _FeedList(ui.element, component="feed.js"):
    """The feed's element: its rows are data (the `rows` prop, dicts of `_row`), drawn by feed.js."""


def _row(movement: Movement) -> dict[str, Any]:
    """What feed.js draws of a movement (how it draws an actor is its own)."""
    return {
        "id": movement.id,
        "actor": movement.actor,
        "sku": movement.sku,
        "delta": signed(movement.delta),
        "after": units(movement.on_hand_after),
        "reason": movement.reason,
        "time": when(movement.at),
    }


@dataclass(frozen=True, slots=True)
class _NewRows:
    """A change's movements as rows, newest first, `prepend`'s arguments (encoded) and the range of their ids."""

    rows: tuple[dict[str, Any], ...]
    arguments: str
    lowest: int
    highest: int


@functools.lru_cache(maxsize=64)
def _new_rows(movements: tuple[Movement, ...]) -> _NewRows:
    """Made once for every view of the warehouse (never mutated)."""
    rows = tuple(_row(movement) for movement in reversed(movements))
    ids = [movement.id for movement in movements]
    return _NewRows(rows, encode_arguments(rows), min(ids), max(ids))


class FeedRows:
    """The feed's rows of the views of one shared stock, newest first, at most `size`: one plain list of row dicts,
    which every such feed's `rows` prop is, changed in place once for all of them. The row dicts are shared and
    never mutated."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.rows: list[dict[str, Any]] = []
        self._highest = 0  # no movement shown has a higher id: those above it are new

    def show(self, movements: Sequence[Movement]) -> Call | None:
        """Show exactly these movements (newest first): the call that brings a feed showing the rows before to them
        (None: the same movements)."""
        rows = [_row(movement) for movement in movements[: self.size]]
        if [row["id"] for row in rows] == [row["id"] for row in self.rows]:
            return None
        self.rows[:] = rows
        self._highest = max((row["id"] for row in rows), default=0)
        return "feed", "setRows", encode_arguments(rows)

    def add(self, movements: tuple[Movement, ...]) -> Call | None:
        """New movements (oldest first, as a change lists them) on top of the rows: the call that adds them (None:
        all were shown)."""
        if not movements:
            return None
        new = _new_rows(movements)
        fresh = new.rows
        if new.lowest <= self._highest:  # some may be shown already (changes of several workers arrive out of order)
            shown = {row["id"] for row in self.rows}
            fresh = tuple(row for row in new.rows if row["id"] not in shown)
        if not fresh:
            return None
        self.rows[:0] = fresh
        del self.rows[self.size :]
        self._highest = max(self._highest, new.highest)
        return "feed", "prepend", new.arguments if fresh is new.rows else encode_arguments(fresh)


class MovementFeed:
    """One view's feed of a shared stock's rows (`FeedRows`): a change sends only its new rows; the tab drops the
    oldest.

    The server's rows are a plain list, put into the prop past NiceGUI's observables (`keep`): NiceGUI wraps the lists
    and dicts put into props in observable copies, which for a feed changed in every watching view cost more than the
    rest of the change."""

    def __init__(self, size: int) -> None:
        self.list = _FeedList().classes("inventory-feed w-full").props('data-testid="movement-feed"')
        self.list.props["size"] = size
        keep(self.list, "rows", [])

    def show(self, rows: FeedRows) -> None:
        """Show a shared stock's rows (those of another, or none, before)."""
        old: list[dict[str, Any]] = self.list.props["rows"]
        if old is not rows.rows:
            keep(self.list, "rows", rows.rows)
            if [row["id"] for row in old] != [row["id"] for row in rows.rows]:
                self.list.update()

    def resend(self, calls: BrowserCalls) -> None:
        calls.method(self.list, "setRows", self.list.props["rows"])
