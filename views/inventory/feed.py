"""The feed of recent movements in the warehouse, each marked as made by an agent or a person."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from nicegui import ui

from actions.domain import Movement
from views.inventory.format import signed, units, when

__all__ = ["MovementFeed"]

_ACTORS = {
    "agent": ("smart_toy", "Agent", "bg-violet-100 text-violet-700"),
    "person": ("person", "Person", "bg-sky-100 text-sky-700"),
}


class MovementFeed:
    """Newest first, at most `size` rows. Row elements are kept: a row stays the same element while its movement is
    shown, and a new movement takes over the element of the oldest one (new markup, moved to the top)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.list = ui.column().classes("inventory-feed w-full gap-0").props('data-testid="movement-feed"')
        with self.list:
            self.empty = ui.label("No movements yet.").classes("text-sm text-gray-500 py-4")
        self._rows: dict[int, ui.html] = {}  # movement id -> its row, newest first

    def show(self, movements: Sequence[Movement]) -> None:
        """Show exactly these movements (newest first)."""
        self._arrange([movement.id for movement in movements[: self.size]], {m.id: m for m in movements})

    def add(self, movements: Sequence[Movement]) -> None:
        """New movements (oldest first, as a change lists them) on top of the rows shown."""
        fresh = [movement.id for movement in reversed(movements) if movement.id not in self._rows]
        if fresh:
            self._arrange([*fresh, *self._rows][: self.size], {m.id: m for m in movements})

    def _arrange(self, order: list[int], movements: dict[int, Movement]) -> None:
        if order == list(self._rows):
            return
        spare = [row for key, row in self._rows.items() if key not in order]  # newest first: pop() is the oldest
        rows: dict[int, ui.html] = {}
        for key in order:
            row = self._rows.get(key)
            if row is None:
                row = spare.pop() if spare else self._new_row()
                self._fill(row, movements[key])
            rows[key] = row
        for row in spare:
            self.list.remove(row)
        children = self.list.default_slot.children
        for position, row in enumerate(rows.values(), start=1):  # after the "no movements" label
            if children[position] is not row:
                row.move(self.list, target_index=position)
        self._rows = rows
        self.empty.set_visibility(not rows)

    def _new_row(self) -> ui.html:
        with self.list:
            return ui.html().classes(
                "w-full flex items-center gap-3 flex-nowrap py-2 border-b border-gray-100 last:border-0"
            )

    @staticmethod
    def _fill(row: ui.html, movement: Movement) -> None:
        """The row's markup (one element per row, written here: a feed row costs one element, not a dozen)."""
        icon, label, color = _ACTORS[movement.actor]
        tone = "text-emerald-600" if movement.delta > 0 else "text-rose-600"
        reason = escape(movement.reason)
        row.props["data-actor"] = movement.actor
        row.set_content(
            f'<div class="rounded-full p-1.5 shrink-0 {color}">'
            f'<i class="q-icon notranslate material-icons" aria-hidden="true" style="font-size:16px">{icon}</i></div>'
            '<div class="flex flex-col grow min-w-0 overflow-hidden">'
            '<div class="flex items-baseline gap-2 flex-nowrap">'
            f'<span class="font-mono text-xs text-gray-700">{escape(movement.sku)}</span>'
            f'<span class="text-sm font-semibold {tone}">{signed(movement.delta)}</span>'
            f'<span class="text-xs text-gray-500">→ {units(movement.on_hand_after)}</span></div>'
            f'<div class="w-full text-xs text-gray-500 truncate" title="{reason}">{reason}</div></div>'
            '<div class="flex flex-col items-end shrink-0">'
            f'<span class="text-[10px] uppercase tracking-wide font-semibold rounded px-1.5 {color}">{label}</span>'
            f'<span class="text-[11px] text-gray-400 whitespace-nowrap">{when(movement.at)}</span></div>'
        )
