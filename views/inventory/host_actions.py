"""What the inventory does with the MCP Apps host it is shown in: the selected item goes into the model's context,
a low-stock item can be handed to the assistant for reordering, and links open through the host."""

from __future__ import annotations

import logging
from urllib.parse import urljoin

from nicegui import background_tasks, ui

from actions.domain import StockRow
from views.inventory.styles import ROUTINE
from webapp import Host, HostError

__all__ = ["HostActions", "reorder_message", "selection_context"]

log = logging.getLogger(__name__)


def selection_context(row: StockRow) -> str:
    return (
        f"In the inventory view the user selected {row.sku} ({row.name}) in warehouse {row.warehouse}: "
        f"{row.on_hand} on hand, {row.available} available, reorder point {row.reorder_point}."
    )


def reorder_message(row: StockRow) -> str:
    return (
        f"Please reorder {row.sku} ({row.name}) for warehouse {row.warehouse}: only {row.available} {row.unit} "
        f"available, below its reorder point of {row.reorder_point}."
    )


class HostActions:
    """The inventory's requests to its host; each failure is told to the person, never raised into the page."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._context: str | None = None

    def selected(self, row: StockRow | None) -> None:
        """Keep the model's context on the selected item (a host without model context says so in the log)."""
        text = selection_context(row) if row is not None else "In the inventory view no item is selected."
        if text == self._context:
            return
        self._context = text

        async def update() -> None:
            try:
                await self._host.update_model_context(text)
            except HostError as error:
                log.info("the model context was not updated: %s", error)

        background_tasks.create(update(), name="inventory-model-context")

    async def reorder(self, row: StockRow) -> None:
        try:
            await self._host.send_message(reorder_message(row))
        except HostError as error:
            ui.notify(str(error), type="warning")
            return
        ui.notify(f"Asked the assistant to reorder {row.sku}.", type="positive", attrs=ROUTINE)

    async def open_link(self, path: str) -> None:
        """Open `path` (relative to this page) in the host's browser: a framed page cannot open windows itself."""
        here = await ui.run_javascript("location.href")
        try:
            await self._host.open_link(urljoin(str(here), path))
        except HostError as error:
            ui.notify(str(error), type="warning")
