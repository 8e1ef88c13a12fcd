"""The status line: "Waiting for an agent", "Driven by an agent", or — shown by the browser itself while its
connection to the server is down — "Reconnecting…".
"""

from __future__ import annotations

from nicegui import ui

__all__ = ["DRIVEN", "RECONNECTING", "WAITING", "StatusLine"]

WAITING = "Waiting for an agent"
DRIVEN = "Driven by an agent"
RECONNECTING = "Reconnecting…"


class StatusLine:
    """The online part is set by the server; the offline part is shown by CSS (see `styles`)."""

    def __init__(self) -> None:
        self._driven: bool | None = None
        with ui.row().classes("inventory-status items-center gap-2 text-sm").props('data-testid="status"'):
            with ui.row().classes("when-online items-center gap-2"):
                self._dot = ui.element("span").classes("dot bg-gray-400")
                self._text = ui.label(WAITING).classes("text-gray-600")
            with ui.row().classes("when-offline items-center gap-2"):
                ui.element("span").classes("dot live bg-amber-500")
                ui.label(RECONNECTING).classes("text-amber-700")

    def set_driven(self, driven: bool) -> None:
        if driven == self._driven:
            return
        self._driven = driven
        self._text.set_text(DRIVEN if driven else WAITING)
        self._dot.classes(remove="bg-gray-400 bg-emerald-500 live")
        self._dot.classes("bg-emerald-500 live" if driven else "bg-gray-400")
        self._text.classes(remove="text-gray-600 text-emerald-700")
        self._text.classes("text-emerald-700" if driven else "text-gray-600")
