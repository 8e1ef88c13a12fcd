"""The top bar of the inventory view: title, current warehouse, status line, warehouse picker, call-log link."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from nicegui import ui

from actions.domain import WarehouseSummary
from views.inventory.status import StatusLine

__all__ = ["Header"]


class Header:
    """`show(code)` sets the current warehouse without reporting a change back. With `open_link` (inline in a host)
    the call-log link opens through it."""

    def __init__(
        self,
        warehouses: Sequence[WarehouseSummary],
        on_warehouse: Callable[[str], None],
        viewer_url: str | None,
        open_link: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self._names = {w.code: f"{w.name} · {w.city}" for w in warehouses}
        self._on_warehouse = on_warehouse
        self._muted = False
        with ui.row().classes("w-full items-center justify-between gap-4"):
            with ui.row().classes("items-center gap-3 no-wrap"):
                ui.icon("warehouse", size="md").classes("text-white bg-indigo-600 rounded-xl p-2 shadow-sm")
                with ui.column().classes("gap-0"):
                    with ui.row().classes("items-center gap-2"):
                        ui.label("Inventory").classes("text-2xl font-bold tracking-tight text-gray-900")
                        self.code = (
                            ui.label("")
                            .classes("font-mono text-sm font-semibold rounded-md bg-indigo-50 text-indigo-700 px-2")
                            .props('data-testid="warehouse-code"')
                        )
                    self.subtitle = ui.label("").classes("text-sm text-gray-500")
            with ui.row().classes("items-center gap-4"):
                self.status = StatusLine()
                self.picker = (
                    ui.select(
                        {w.code: f"{w.code} · {w.name}" for w in warehouses},
                        label="Warehouse",
                        on_change=lambda e: self._picked(e.value),
                    )
                    .props('dense outlined options-dense data-testid="warehouse-select"')
                    .classes("w-56 bg-white")
                )
                if viewer_url is not None:
                    link = ui.button("Call log", icon="receipt_long").tooltip("Every tool call the agent makes, live")
                    link.props('outline no-caps color=indigo data-testid="viewer-link"')
                    if open_link is None:
                        link.props(f'href="{viewer_url}" target=_blank')
                    else:
                        link.on_click(lambda: open_link(viewer_url))

    def show(self, code: str) -> None:
        self.code.set_text(code)
        self.subtitle.set_text(self._names.get(code, ""))
        self._muted = True
        try:
            self.picker.set_value(code)
        finally:
            self._muted = False

    def _picked(self, code: object) -> None:
        if not self._muted and isinstance(code, str):
            self._on_warehouse(code)
