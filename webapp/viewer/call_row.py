"""One row of the viewer's live list: a single element whose texts the browser lays out (`call_row.js`)."""

from __future__ import annotations

from nicegui import ui

__all__ = ["CallRow"]


class CallRow(ui.element, component="call_row.js"):
    """A call in the list: its status (`ok`/`error`), tool, duration, time, caller, and view and worker if any."""

    def __init__(
        self, *, seq: int, status: str, tool: str, duration: str, time: str, caller: str, view: str, worker: str
    ) -> None:
        super().__init__()
        self.classes(f"wv-call wv-call-{status}")
        texts = {"tool": tool, "duration": duration, "time": time, "caller": caller, "view": view, "worker": worker}
        self._props.update(texts, status=status)
        self._props["data-seq"] = str(seq)
        if worker:
            self._props["data-worker"] = worker
