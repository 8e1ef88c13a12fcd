"""The feed of recent movements in the warehouse, each marked as made by an agent or a person."""

from __future__ import annotations

from collections.abc import Sequence

from nicegui import ui

from actions.domain import Movement
from views.inventory.format import signed, units, when

__all__ = ["MovementFeed"]

_ACTORS = {
    "agent": ("smart_toy", "Agent", "bg-violet-100 text-violet-700"),
    "person": ("person", "Person", "bg-sky-100 text-sky-700"),
}


class MovementFeed:
    """`update()` rebuilds the list (a dozen short rows)."""

    def __init__(self) -> None:
        self.list = ui.column().classes("w-full gap-0").props('data-testid="movement-feed"')

    def update(self, movements: Sequence[Movement]) -> None:
        self.list.clear()
        with self.list:
            if not movements:
                ui.label("No movements yet.").classes("text-sm text-gray-500 py-4")
            for movement in movements:
                self._row(movement)

    @staticmethod
    def _row(movement: Movement) -> None:
        icon, label, color = _ACTORS[movement.actor]
        tone = "text-emerald-600" if movement.delta > 0 else "text-rose-600"
        with (
            ui.row()
            .classes("w-full items-center gap-3 no-wrap py-2 border-b border-gray-100 last:border-0")
            .props(f'data-actor="{movement.actor}"')
        ):
            with ui.element("div").classes(f"rounded-full p-1.5 {color}"):
                ui.icon(icon, size="xs")
            with ui.column().classes("gap-0 grow min-w-0"):
                with ui.row().classes("items-baseline gap-2 no-wrap"):
                    ui.label(movement.sku).classes("font-mono text-xs text-gray-700")
                    ui.label(signed(movement.delta)).classes(f"text-sm font-semibold {tone}")
                    ui.label(f"→ {units(movement.on_hand_after)}").classes("text-xs text-gray-500")
                ui.label(movement.reason).classes("text-xs text-gray-500 truncate")
            with ui.column().classes("gap-0 items-end shrink-0"):
                ui.label(label).classes(f"text-[10px] uppercase tracking-wide font-semibold rounded px-1.5 {color}")
                ui.label(when(movement.at)).classes("text-[11px] text-gray-400")
