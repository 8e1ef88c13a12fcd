"""Component method calls for one tab, collected while a change is applied and sent with its element updates."""

from __future__ import annotations

from typing import Any

from nicegui import ui
from nicegui.element import Element

__all__ = ["BrowserCalls"]


class BrowserCalls(ui.element, component="calls.js"):
    """What `Element.run_method` would send as one message per call, sent instead as an update of this invisible
    element: the tab runs the calls right after applying the update message they travel in, so a change costs one
    message (and the bridge confirms it with that message, not with a round trip behind it)."""

    def __init__(self) -> None:
        super().__init__()
        self._update_method = "run"
        self._pending: list[list[Any]] = []

    def method(self, element: Element, name: str, *args: Any, at_frame: bool = False) -> None:
        """Call `name(*args)` on the element in the tab; `at_frame`: at its next animation frame, after the change's
        confirmation has been answered (drawing)."""
        self._pending.append([element.id, name, list(args), at_frame])

    def send(self) -> None:
        """Send the collected calls (nothing when there are none)."""
        if self._pending:
            unsent = self.id in self.client.outbox.updates  # the last calls have not gone out yet: they go with these
            before: list[list[Any]] = self._props.get("calls", []) if unsent else []
            self._props["calls"], self._pending = [*before, *self._pending], []
            self.update()
