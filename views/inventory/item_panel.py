"""The selected item's card: its figures and a form with which a person adjusts its stock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nicegui import ui

from actions.domain import MAX_QUANTITY, MAX_REASON_LENGTH, StockRow
from views.inventory.format import money, units
from webapp import Island

__all__ = ["AdjustHandler", "ItemPanel"]

AdjustHandler = Callable[[str, int, str], str | None]
"""`(sku, delta, reason) -> error text or None` — the page applies the change and reports a refusal."""


_ESCAPE = """(event) => {
  if (event.key !== "Escape") return;
  const row = document.querySelector("[data-testid=stock-table] tr.row-selected");
  emit();
  row?.focus();
}"""


class ItemPanel:
    """Hidden placeholder text when nothing is selected; else the item and the adjust form (and, inline in a host
    that takes messages, a low-stock item's request to the assistant to reorder it)."""

    def __init__(
        self,
        on_adjust: AdjustHandler,
        on_close: Callable[[], None],
        on_reorder: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._on_adjust = on_adjust
        self._can_reorder = on_reorder is not None
        self._sku: str | None = None
        panel = ui.column().classes("w-full gap-3").props('data-testid="item-panel"')
        # Escape inside the panel closes it, and the focus goes back to the item's row in the table
        panel.on("keydown", on_close, js_handler=_ESCAPE)
        with panel:
            self.placeholder = ui.label("Pick an item in the table to see its history and adjust its stock.").classes(
                "text-sm text-gray-500"
            )
            with ui.column().classes("w-full gap-3") as self.body:
                # the texts change with every selection and change: islands of their own, without the form and the
                # close button (its tooltip is a component that would render again with them)
                with ui.row().classes("w-full items-start justify-between no-wrap"):
                    with Island().classes("nicegui-column gap-0 min-w-0"):
                        self.sku = ui.label("").classes("font-mono text-xs text-indigo-600")
                        self.name = ui.label("").classes("text-base font-semibold text-gray-900 leading-snug")
                        self.meta = ui.label("").classes("text-xs text-gray-500")
                    ui.button(icon="close", on_click=on_close).props(
                        'flat round dense size=sm data-testid="item-close"'
                    ).tooltip("Unselect")
                with Island().classes("nicegui-column w-full gap-3"):
                    with ui.element("div").classes("grid grid-cols-4 gap-2 w-full"):
                        self.figures = {key: self._figure(label) for key, label in _FIGURES}
                    self.low = ui.label("").classes("text-xs font-medium text-amber-700")
                self.reorder = (
                    ui.button("Ask the assistant to reorder", icon="forum", on_click=on_reorder)
                    .props('outline no-caps color=amber-9 dense data-testid="reorder-ask"')
                    .classes("w-full")
                )
                with ui.row().classes("w-full items-start gap-2 no-wrap"):
                    self.delta = (
                        ui.number("Change", value=None, step=1, precision=0, min=-MAX_QUANTITY, max=MAX_QUANTITY)
                        .props('dense outlined data-testid="adjust-delta"')
                        .classes("w-28")
                    )
                    self.reason = (
                        ui.input("Reason", placeholder="e.g. Cycle count")
                        .props(f'dense outlined maxlength={MAX_REASON_LENGTH} data-testid="adjust-reason"')
                        .classes("grow")
                    )
                self.apply = (
                    ui.button("Apply change", icon="edit_note", on_click=self._apply)
                    .props('unelevated color=indigo no-caps data-testid="adjust-apply"')
                    .classes("w-full")
                )
        self.body.set_visibility(False)

    @staticmethod
    def _figure(label: str) -> ui.label:
        with ui.column().classes("gap-0 rounded-lg bg-gray-50 px-2 py-1.5"):
            ui.label(label).classes("text-[10px] uppercase tracking-wide text-gray-500")
            return ui.label("–").classes("text-sm font-semibold text-gray-900")

    def show(self, row: StockRow | None) -> None:
        if row is None or row.sku != self._sku:  # another item: start with an empty form
            self.delta.set_value(None)
            self.reason.set_value("")
        self._sku = None if row is None else row.sku
        self.placeholder.set_visibility(row is None)
        self.body.set_visibility(row is not None)
        if row is None:
            return
        self.sku.set_text(row.sku)
        self.name.set_text(row.name)
        self.meta.set_text(f"{row.category} · {money(row.unit_cost_cents)} per {row.unit} · {row.warehouse}")
        for key, value in (
            ("on_hand", row.on_hand),
            ("reserved", row.reserved),
            ("available", row.available),
            ("reorder_point", row.reorder_point),
        ):
            self.figures[key].set_text(units(value))
        self.low.set_text(
            f"Low stock: {units(row.available)} available, reorder at {units(row.reorder_point)}."
            if row.low_stock
            else ""
        )
        self.low.set_visibility(row.low_stock)
        self.reorder.set_visibility(row.low_stock and self._can_reorder)

    def _apply(self) -> None:
        sku, value, reason = self._sku, self.delta.value, (self.reason.value or "").strip()
        if sku is None:
            return
        if value is None or int(value) == 0:
            ui.notify("Enter a change other than 0: positive adds units, negative takes them.", type="warning")
            return
        if not reason:
            ui.notify("Say why the stock changes (the reason is recorded with the movement).", type="warning")
            return
        problem = self._on_adjust(sku, int(value), reason)
        if problem is not None:
            ui.notify(problem, type="negative")
            return
        self.delta.set_value(None)
        self.reason.set_value("")


_FIGURES = (("on_hand", "On hand"), ("reserved", "Reserved"), ("available", "Available"), ("reorder_point", "Reorder"))
