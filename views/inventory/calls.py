"""Component method calls for one tab, collected while a change is applied and sent with its element updates."""

from __future__ import annotations

from typing import Any

from nicegui import json, ui
from nicegui.element import Element

__all__ = ["BrowserCalls"]


class BrowserCalls(ui.element, component="calls.js"):
    """What `Element.run_method` would send as one message per call, sent instead as an update of this invisible
    element: the tab runs the calls right after applying the update message they travel in, so a change costs one
    message (and the bridge confirms it with that message, not with a round trip behind it)."""

    def __init__(self) -> None:
        super().__init__()
        self._update_method = "run"
        self._pending: list[str] = []  # each call as JSON text
        self._unsent: list[str] = []  # the calls of the last send while its update has not gone out

    def method(self, element: Element, name: str, *args: Any, at_frame: bool = False) -> None:
        """Call `name(*args)` on the element in the tab; `at_frame`: at its next animation frame, after the change's
        confirmation has been answered (drawing)."""
        self._pending.append(json.dumps([element.id, name, args, at_frame]))

    def send(self) -> None:
        """Send the collected calls (nothing when there are none)."""
        if self._pending:
            if self.id not in self.client.outbox.updates:  # else the last calls have not gone out: they go with these
                self._unsent = []
            self._unsent, self._pending = [*self._unsent, *self._pending], []
            # as JSON text, encoded when called: NiceGUI wraps a prop's lists and dicts in observables, socket.io
            # walks them for binary data, and they outlive the change, which all cost more than the change itself
            # in a server with many watching tabs
            self._props["calls"] = f"[{','.join(self._unsent)}]"
            self.update()
