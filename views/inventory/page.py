"""The inventory view: one warehouse's stock, driven by an agent over MCP and by a person in the browser.

Every committed stock change (from any view, tool or person) reaches every open view of its warehouse as one
app event (`actions.changes`). The views that show the warehouse with the same filters and selection share what they
show (`views.inventory.shared`): the change is applied once for them, and each sends its tab the same calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from nicegui import ui

from actions.changes import topic
from actions.domain import InventoryError, Movement, StockRow, UnknownWarehouse, Warehouse
from actions.inventory_prompts import (
    ItemArguments,
    WarehouseArguments,
    complete_sku,
    complete_warehouse,
    explain_movements,
    restock_low,
)
from actions.inventory_tools import InventoryActions, InventoryInput, show_update
from actions.store import InventoryStore
from actions.tool_errors import unknown_warehouse
from views.inventory.calls import BrowserCalls
from views.inventory.chart import StockChart
from views.inventory.feed import MovementFeed
from views.inventory.filters import FilterBar
from views.inventory.header import Header
from views.inventory.host_actions import HostActions
from views.inventory.item_panel import ItemPanel
from views.inventory.kpis import KpiCards
from views.inventory.services import InventoryServices
from views.inventory.shared import FEED_SIZE, SharedStock, ShareKey
from views.inventory.state import InventoryState
from views.inventory.stock_table import StockTable
from views.inventory.styles import ROUTINE, install_page_styles
from webapp import (
    BuiltResult,
    Database,
    Event,
    Island,
    McpAppUpdateEvent,
    Subscription,
    ViewContext,
    mcp_app,
    mcp_app_prompt,
)

__all__ = ["DESCRIPTION", "InventoryView"]

DESCRIPTION = (
    "Opens the live inventory of a warehouse in the user's browser: stock levels, low-stock items, a chart and the "
    "latest stock movements. Open it when the user wants to see, check or change stock; then drive it with the "
    "inventory_* tools while the user watches."
)


@mcp_app(
    description=DESCRIPTION,
    route="/inventory",
    input=InventoryInput,
    actions=(InventoryActions,),
    select=True,
)
class InventoryView:
    """Built by the framework in a tab as `InventoryView(context)`; a server binds `services` in a subclass."""

    services: ClassVar[InventoryServices]

    def __init__(self, view: ViewContext[InventoryInput]) -> None:
        self._context = view
        self.host = HostActions(view.host) if view.host is not None else None  # inline in an MCP Apps host
        self._subscription: Subscription | None = None
        self._generation = 0  # the steps of its shared stock the tab was sent
        self._item: StockRow | None = None  # the row the item panel shows
        self._count = -1  # the number of rows the count says
        warehouses = self.store.list_warehouses()
        # the store lists the default first; asked for alone only to raise UnknownWarehouse when there is none
        default = warehouses[0].code if warehouses else self.store.default_warehouse().code
        opening = None if view.input is None else view.input.model_dump(exclude_unset=True)
        codes, driven = {w.code for w in warehouses}, self.services.tabs.opened_by_agent
        self.state, notice = InventoryState.initial(
            view.data, opening, default, codes, driven=driven, spelled=self._known_category
        )
        self.state.save(view.data)
        # the changes are followed before the stock is read (or joined): none committed after the read is missed
        self._follow(self.state.warehouse)
        self._share = self._join(self.state, next(w.warehouse for w in warehouses if w.code == self.state.warehouse))
        install_page_styles()
        ui.page_title("Inventory")
        ui.query("body").classes("bg-slate-50")
        with ui.column().classes("w-full max-w-screen-2xl mx-auto px-6 py-5 gap-5") as self.root:
            viewer, open_link = self.services.tabs.viewer_link(), self.host.open_link if self.host else None
            self.header = Header(warehouses, self._pick_warehouse, viewer, open_link)
            self.notice = ui.label(notice or "").classes(
                "w-full rounded-lg bg-amber-50 text-amber-800 text-sm px-4 py-2 border border-amber-200"
            )
            self.notice.set_visibility(notice is not None)
            self.kpis = KpiCards()
            columns = "grid-cols-1 xl:grid-cols-[minmax(0,1fr)_20rem] 2xl:grid-cols-[minmax(0,1fr)_26rem]"
            grid = f"grid {columns} gap-5 w-full items-start"
            with ui.element("div").classes(grid):
                with ui.card().classes("min-w-0 p-0 gap-0 shadow-sm").props("flat bordered"):
                    with ui.column().classes("w-full gap-3 px-5 pt-4 pb-3 border-b border-gray-100"):
                        # the count's own island: its change would render the table again otherwise
                        with Island().classes("nicegui-row w-full items-baseline justify-between"):
                            ui.label("Stock").classes("text-base font-semibold text-gray-800")
                            self.count = ui.label("").classes("text-xs text-gray-500").props('data-testid="row-count"')
                        self.filters = FilterBar(self._share.category_names, self.apply_input)
                    self.table = StockTable(self._pick_item, lambda: self.select(None))
                with ui.column().classes("gap-5 w-full"):
                    with ui.card().classes("w-full p-5 shadow-sm").props("flat bordered"):
                        reorder = self._reorder if self.host else None
                        self.item = ItemPanel(self._adjust, lambda: self.select(None), reorder)
                    with ui.card().classes("w-full p-5 gap-2 shadow-sm").props("flat bordered"):
                        self.chart = StockChart()
                    with ui.card().classes("w-full p-5 gap-1 shadow-sm").props("flat bordered"):
                        with ui.row().classes("w-full items-baseline justify-between"):
                            ui.label("Recent movements").classes("text-base font-semibold text-gray-800")
                            ui.label("times in UTC").classes("text-xs text-gray-500")
                        self.feed = MovementFeed(FEED_SIZE)
            with Island().classes("hidden"):  # its updates re-render it alone
                self.calls = BrowserCalls((self.table, self.feed, self.kpis, self.chart))  # and the search's
        # its parts that the calls of its shared stock go to, in the order of `PARTS`
        self._ids = (self.table.table.id, self.feed.list.id, *(figure.id for figure in self.kpis.figures))
        self._show()
        ui.context.client.on_delete(self._close)

    @classmethod
    def check_mcp_app_input(cls, params: InventoryInput) -> BuiltResult | None:
        """`inventory` and `inventory_update` refuse an unknown warehouse before a view is opened, reused or changed."""
        if "warehouse_code" not in params.model_fields_set:
            return None  # the view keeps its warehouse, or a new one shows the default
        try:
            cls.services.store.get_warehouse(params.warehouse_code)
        except UnknownWarehouse:
            return unknown_warehouse(params.warehouse_code)
        return None

    @classmethod
    def resource(cls, data: Mapping[str, Any], db: Database) -> dict[str, Any]:
        """The view's resource (`webapp://views/{view}`): its warehouse, filters and selection, the warehouse's KPI
        figures and low-stock SKUs, read through the inventory's store (on the same database as `db`)."""
        store = cls.services.store
        state = InventoryState.load(data) or InventoryState(warehouse=store.default_warehouse().code)
        kpis = store.warehouse_kpis(state.warehouse)
        low = [row.sku for row in store.list_stock(state.warehouse, low_stock_only=True)]
        fields = ("warehouse", "search", "category", "low_stock_only", "selected")
        return {name: getattr(state, name) for name in fields} | {
            "kpis": {"items": kpis.items, "units_on_hand": kpis.units_on_hand,
                     "stock_value_cents": kpis.stock_value_cents, "low_stock": kpis.low_stock},
            "low_stock_skus": low,
        }  # fmt: skip

    @mcp_app_prompt(
        description="Restock what is low in a warehouse: its items below the reorder point, to plan an "
        "order with the person",
        arguments=WarehouseArguments,
        complete={"warehouse_code": "warehouses"},
    )
    @classmethod
    def restock(cls, arguments: WarehouseArguments) -> str:
        return restock_low(cls.services.store, arguments)

    @mcp_app_prompt(
        description="Explain an item's movements in a warehouse: its stock and newest movements",
        arguments=ItemArguments,
        complete={"warehouse_code": "warehouses", "sku": "skus"},
    )
    @classmethod
    def explain_item(cls, arguments: ItemArguments) -> str:
        return explain_movements(cls.services.store, arguments)

    @classmethod
    def warehouses(cls, value: str, context: Mapping[str, str]) -> list[str]:
        """The warehouse codes a prompt's `warehouse_code` completes to."""
        return complete_warehouse(cls.services.store, value)

    @classmethod
    def skus(cls, value: str, context: Mapping[str, str]) -> list[str]:
        """The SKUs a prompt's `sku` completes to, in the warehouse already given."""
        return complete_sku(cls.services.store, value, context)

    # -- what the actions use ------------------------------------------------------------------------------------

    @property
    def store(self) -> InventoryStore:
        return self.services.store

    @property
    def warehouse(self) -> str:
        return self.state.warehouse

    @property
    def rows(self) -> tuple[StockRow, ...]:
        """The stock rows the table shows now (filtered, unsorted by the person's column clicks)."""
        return tuple(self._share.rows.values())

    def agent_acted(self) -> None:
        """An agent called a tool on this view: the status line says it is driven."""
        if not self.state.driven:
            self._set(replace(self.state, driven=True))
            self.header.status.set_driven(True)

    def apply_input(self, changes: dict[str, Any]) -> None:
        """Apply sent input fields; an unknown warehouse raises `UnknownWarehouse` and changes nothing."""
        state = self.state.with_filters(changes)
        if state.warehouse == self.state.warehouse:
            self._move(replace(state, category=self._known_category(state.category)))
        else:
            warehouse = self.store.get_warehouse(state.warehouse)
            self._move(
                replace(state, warehouse=warehouse.code, category=self._known_category(state.category)), warehouse
            )
        self.notice.set_visibility(False)

    @property
    def history(self) -> tuple[Movement, ...]:
        """The selected item's last movements, newest first, as its chart shows them (none without a selection)."""
        return self._share.history

    def select(self, item: StockRow | None) -> None:
        """Select an item (None: none): the tab is sent what differs, not the whole view."""
        self._move(replace(self.state, selected=None if item is None else item.sku))

    def refresh(self, warehouse: Warehouse | None = None) -> None:
        """Read everything the view shows from the store (`warehouse`: the shown one as the caller has just read it,
        else it is read here), for every view that shows the same; the tabs are sent only what differs."""
        if not self._move(self.state, warehouse):
            self._share.read(warehouse)
            self._share.nudge()
            self._take()

    def catch_up(self) -> None:
        """Apply the changes published so far now (the acting view, before its call returns and is confirmed)."""
        self._share.catch_up()
        self._take()

    async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> Any:
        """`inventory_update` (and a reused `inventory` call): apply the sent fields, answer with the rows."""
        return show_update(self, event)

    # -- internals -----------------------------------------------------------------------------------------------

    def _known_category(self, category: str | None) -> str | None:
        """The category as the store spells it (agents may type it in any case)."""
        if category is None:
            return None
        folded = category.casefold()
        return next((name for name in self.store.list_categories() if name.casefold() == folded), category)

    def _set(self, state: InventoryState) -> None:
        self.state = state
        state.save(self._context.data)
        self._context.save()

    def _join(self, state: InventoryState, warehouse: Warehouse | None = None) -> SharedStock:
        """The stock shared by the views that show what `state` asks for (`warehouse`: the caller's read of it)."""
        services, key = self.services, ShareKey.of(state)
        return services.shares.join(key, self._take, store=services.store, events=services.events, warehouse=warehouse)

    def _move(self, state: InventoryState, warehouse: Warehouse | None = None) -> bool:
        """Take `state`, and show the stock it asks for when it is not the one shown (True then): the tab is sent what
        differs. When the store refuses it (an item or warehouse gone meanwhile), the view stays as it was."""
        share = self._share
        if share.key == ShareKey.of(state):
            self._set(state)
            return False
        self._follow(state.warehouse)
        try:
            self._share = self._join(state, warehouse)
        except Exception:
            self._follow(share.key.warehouse)
            raise
        self._set(state)
        self.services.shares.leave(share, self._take)
        self._show()
        return True

    def _show(self) -> None:
        """Show the whole shared stock (another one, or none, shown before): the tab is sent only what differs."""
        state, share, calls = self.state, self._share, self.calls
        self._generation = share.generation
        self.header.show(state.warehouse)
        self.header.status.set_driven(state.driven)
        self.filters.show(state.search, state.category, state.low_stock_only, calls)
        self.kpis.show(share.kpis, calls)
        self.table.show(share.table, calls)
        self.feed.show(share.feed)
        self._show_own()
        calls.send()

    def _take(self) -> None:
        """Send the tab the steps of its shared stock it was not sent yet."""
        share, calls = self._share, self.calls
        if self._generation == share.generation or self.root.is_deleted:
            return
        text = share.text_since(self._generation, self._ids)
        self._generation = share.generation
        self.kpis.adopt(share.kpis)
        if text is None:  # too far behind: everything
            calls.resend()
        elif text:
            calls.joined(text)
        self.table.show_empty()
        self._show_own()
        calls.send()

    def _show_own(self) -> None:
        """What each view shows itself of its shared stock: the count, the item panel and the chart."""
        share = self._share
        if (count := len(share.rows)) != self._count:
            self._count = count
            self.count.set_text(f"{count} item{'' if count == 1 else 's'} shown")
        if share.selected is not self._item:
            self._item = share.selected
            self.item.show(share.selected)
            if self.host is not None:
                self.host.selected(share.selected)
        self.chart.show(share.chart.drawn, self.calls)

    def _follow(self, warehouse: str) -> None:
        """Receive the changes of the shown warehouse (and no other)."""
        if self._subscription is not None and self._subscription.topic == topic(warehouse):
            return
        self._unfollow()
        self._subscription = self.services.events.subscribe_batches(topic(warehouse), self._changed)

    def _unfollow(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def _close(self) -> None:
        """The tab is gone: no event reaches this view (nor keeps it in memory) any more."""
        self._unfollow()
        self.services.shares.leave(self._share, self._take)

    def _changed(self, _events: tuple[Event, ...]) -> None:
        """Changes came (a burst merged, `AppEvents.subscribe_batches`): the shared stock applies them, once for all
        its views, and this view sends its tab the steps."""
        if self.root.is_deleted:  # the tab was rebuilt or taken over: this instance is gone
            self._close()
            return
        self._share.catch_up()
        self._take()

    def _pick_warehouse(self, code: str) -> None:
        try:
            self.apply_input({"warehouse_code": code})
        except UnknownWarehouse:
            ui.notify(f"No warehouse has the code '{code}'.", type="negative")

    def _pick_item(self, sku: str) -> None:
        self.select(None if sku == self.state.selected else self.store.get_stock(sku, self.state.warehouse))

    async def _reorder(self) -> None:
        sku = self.state.selected
        if self.host is not None and sku is not None:
            await self.host.reorder(self.store.get_stock(sku, self.state.warehouse))

    def _adjust(self, sku: str, delta: int, reason: str) -> str | None:
        try:
            self.store.adjust_stock(sku, self.state.warehouse, delta, reason=reason, actor="person")
        except InventoryError as error:
            return str(error)
        self.catch_up()
        ui.notify(f"{sku}: stock changed by {delta:+d}.", type="positive", attrs=ROUTINE)
        return None
