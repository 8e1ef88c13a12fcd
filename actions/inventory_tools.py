"""The inventory app's action tools (`inventory_*`) and the answer of `inventory_update`.

Each action runs inside the open inventory view (the bridge routes it there), changes the store as the agent,
shows the change in the view before it answers (`catch_up`), and answers through a Presenter, as structured
content, or as a `tool_error`.
"""

from __future__ import annotations

from typing import Any, Protocol

from actions.domain import InventoryError, Movement, StockRow, Transfer
from actions.inputs import (
    AdjustStockInput,
    InventoryInput,
    SelectItemInput,
    StockReportInput,
    TransferStockInput,
)
from actions.presenters import REPORT, STOCK_ITEM, STOCK_LIST
from actions.removals import ask_before_removal
from actions.shapes import RefreshOut, TransferOut, item_data, refresh_data, report_data
from actions.store import InventoryStore, Record
from actions.tool_errors import domain_error
from webapp import BuiltResult, CallContext, McpAppUpdateEvent, ResponseBuilder, mcp_app_action, toon_success

__all__ = ["ITEM_HISTORY", "InventoryActions", "InventoryInput", "InventoryScreen", "export_rows", "show_update"]

ITEM_HISTORY = 10
"""How many movements `inventory_select_item` embeds."""
WRITE_SCOPE = "inventory:write"
"""The OAuth scope changing stock needs when sign-in is on (besides the server's --auth-scope)."""


class InventoryScreen(Protocol):
    """What the actions need of the open inventory view."""

    @property
    def store(self) -> InventoryStore: ...
    @property
    def warehouse(self) -> str: ...
    @property
    def rows(self) -> tuple[StockRow, ...]: ...
    def agent_acted(self) -> None: ...
    def apply_input(self, changes: dict[str, Any]) -> None: ...
    @property
    def history(self) -> tuple[Movement, ...]: ...
    def select(self, item: StockRow | None) -> None: ...
    def refresh(self) -> None: ...
    def catch_up(self) -> None: ...


def _record(ctx: CallContext | None) -> Record[Any] | None:
    """Keeps the call's result inside the change's transaction when the agent sent a `_call_id`: a retry of the call
    gets it instead of booking again."""
    outcome = None if ctx is None else ctx.outcome
    return None if outcome is None else outcome.store


def _transfer_out(moved: Transfer) -> TransferOut:
    return TransferOut(
        sku=moved.sku,
        from_warehouse=moved.source.warehouse,
        to_warehouse=moved.destination.warehouse,
        quantity=moved.quantity,
        from_on_hand=moved.source.on_hand,
        to_on_hand=moved.destination.on_hand,
    )


def _filters_text(view: InventoryScreen, count: int) -> str:
    return f"The view now shows {count} item(s) of warehouse {view.warehouse}; the user sees the same rows."


def show_update(view: InventoryScreen, event: McpAppUpdateEvent) -> ResponseBuilder | BuiltResult:
    """Apply the sent fields of `inventory_update` (or of a reused `inventory` call) and answer with the rows shown
    (a builder: the framework builds it while the tab shows them).

    An unknown warehouse changes nothing and answers NOT_FOUND.
    """
    view.agent_acted()
    sent = event.arguments_as(InventoryInput).model_dump()
    try:
        view.apply_input({name: sent[name] for name in event.fields_set if name in sent})
    except InventoryError as error:
        return domain_error(error)
    rows = list(view.rows)
    return STOCK_LIST.make(rows).llm_hint(_filters_text(view, len(rows)))


def export_rows(store: InventoryStore, warehouse: str) -> list[dict[str, Any]]:
    """Every stock row of `warehouse` as the agent may see it (schema fields only, supplier e-mail redacted)."""
    fields = STOCK_ITEM.schema_keys()
    rows: list[dict[str, Any]] = []
    for row in store.list_stock(warehouse):
        data = item_data(row)
        shown = {name: data[name] for name in fields}
        shown["supplier_email"] = "[REDACTED]"
        rows.append(shown)
    return rows


class InventoryActions:
    """The action tools of the inventory app (`actions=` of `@mcp_app`); `view` is the open inventory view."""

    @mcp_app_action(
        description=(
            "Re-reads the stock of the view's warehouse from the database and redraws the view. "
            "Returns the warehouse's totals: items, units on hand, low-stock count and stock value in cents."
        ),
        result_view=True,
    )
    def refresh_stock(self, view: InventoryScreen) -> RefreshOut:
        view.agent_acted()
        view.refresh()
        return refresh_data(view.store.warehouse_kpis(view.warehouse))

    @mcp_app_action(
        description=(
            "Books a stock change for one item in the view's warehouse: a positive delta adds units (a delivery), "
            "a negative one takes them (a pick, damage, a count correction); the reason is recorded with the "
            "movement. Taking more than is available fails and changes nothing. Taking more than half of the "
            "item's on-hand units asks the person first when your client can ask them (elicitation): they give "
            "the reason to record, or decline and nothing changes (REMOVAL_DECLINED, a warning). Returns the item "
            "after the change."
        ),
        returns=STOCK_ITEM,
        scope=WRITE_SCOPE,
    )
    async def adjust_stock(
        self, view: InventoryScreen, params: AdjustStockInput, *, ctx: CallContext | None = None
    ) -> StockRow | BuiltResult:
        try:  # before anything changes: a call that asks the person runs again from the start with the answer
            removal = await ask_before_removal(ctx, view.store, view.warehouse, params)
        except InventoryError as error:
            view.agent_acted()
            return domain_error(error)
        if removal.refused is not None:
            return removal.refused  # the person said no: nothing changes, and this is the call's outcome
        view.agent_acted()
        try:
            row = view.store.adjust_stock(
                params.sku, view.warehouse, params.delta, reason=removal.reason, actor="agent", record=_record(ctx)
            )
        except InventoryError as error:
            return domain_error(error)
        view.catch_up()
        return row

    @mcp_app_action(
        description=(
            "Highlights one item in the view and charts its stock history. "
            "Returns the item with its last movements and a history chart."
        ),
        returns=STOCK_ITEM,
    )
    def select_item(self, view: InventoryScreen, params: SelectItemInput) -> dict[str, Any] | BuiltResult:
        view.agent_acted()
        store = view.store
        try:
            row = store.get_stock(params.sku, view.warehouse)
        except InventoryError as error:
            return domain_error(error)
        view.select(row)
        return item_data(row, view.history[:ITEM_HISTORY])

    @mcp_app_action(
        description=(
            "Totals of stock per category (in the view's warehouse) or per warehouse (all warehouses): items, units "
            "on hand, stock value in cents and low-stock count, with a bar chart, a table and a summary."
        ),
        returns=REPORT,
    )
    def stock_report(self, view: InventoryScreen, params: StockReportInput) -> list[dict[str, Any]]:
        view.agent_acted()
        if params.group_by == "warehouse":
            return report_data(view.store.report("warehouse"))
        return report_data(view.store.report("category", warehouse=view.warehouse))

    @mcp_app_action(
        description=(
            "Every stock row of the view's warehouse, unfiltered, as compact TOON (pipe-delimited, one row per item). "
            "Use it for a complete listing; use inventory_update to filter what the user sees."
        ),
        result_view=True,
    )
    def export_stock(self, view: InventoryScreen) -> BuiltResult:
        view.agent_acted()
        return toon_success(export_rows(view.store, view.warehouse))

    @mcp_app_action(
        description=(
            "Moves available units of one item from one warehouse to another in one step (two movements, both "
            "recorded). Fails and changes nothing when the source has fewer available units. Returns both "
            "warehouses' on-hand units after the move."
        ),
        scope=WRITE_SCOPE,
        result_view=True,
    )
    def transfer_stock(
        self, view: InventoryScreen, params: TransferStockInput, *, ctx: CallContext | None = None
    ) -> TransferOut | BuiltResult:
        view.agent_acted()
        record = _record(ctx)
        try:
            moved = view.store.transfer_stock(
                params.sku,
                params.from_warehouse,
                params.to_warehouse,
                params.quantity,
                actor="agent",
                record=None if record is None else lambda db, moved: record(db, _transfer_out(moved)),
            )
        except InventoryError as error:
            return domain_error(error)
        view.catch_up()
        return _transfer_out(moved)
