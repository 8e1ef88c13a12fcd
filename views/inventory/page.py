"""The inventory view: one warehouse's stock, driven by an agent over MCP and by a person in the browser.

Every committed stock change (from any view, tool or person) reaches every open view of its warehouse as one
app event (`actions.changes`), which each view applies with its own filters and selection.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

from nicegui import ui

from actions.changes import WarehouseChange, change_from_text, topic
from actions.domain import InventoryError, Movement, Overview, StockRow, UnknownWarehouse, Warehouse
from actions.inventory_tools import InventoryActions, InventoryInput, show_update
from actions.store import InventoryStore
from actions.tool_errors import unknown_warehouse
from views.inventory.calls import BrowserCalls
from views.inventory.categories import CategoryTotals
from views.inventory.chart import StockChart
from views.inventory.feed import MovementFeed
from views.inventory.filters import FilterBar
from views.inventory.header import Header
from views.inventory.host_actions import HostActions
from views.inventory.item_panel import ItemPanel
from views.inventory.kpis import KpiCards
from views.inventory.services import InventoryServices
from views.inventory.state import InventoryState
from views.inventory.stock_table import StockTable
from views.inventory.styles import install_page_styles
from webapp import RESYNC, BuiltResult, Event, Island, McpAppUpdateEvent, Subscription, ViewContext, mcp_app

__all__ = ["DESCRIPTION", "FEED_SIZE", "HISTORY_SIZE", "InventoryView"]

DESCRIPTION = (
    "Opens the live inventory of a warehouse in the user's browser: stock levels, low-stock items, a chart and the "
    "latest stock movements. Open it when the user wants to see, check or change stock; then drive it with the "
    "inventory_* tools while the user watches."
)
FEED_SIZE = 12
HISTORY_SIZE = 30


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
        self._by_sku: dict[str, StockRow] = {}  # the rows the table shows by sku, in the store's order (by sku)
        self.host = HostActions(view.host) if view.host is not None else None  # inline in an MCP Apps host
        self._history: tuple[Movement, ...] = ()  # the selected item's, newest first
        self._subscription: Subscription | None = None
        self._resync: Subscription | None = None  # the server says changes may have been missed
        self._version = 0  # the newest change this view shows (a change's version; the store's when it read it)
        self._read_version = 0  # the store's version when the view read everything last
        self._row_versions: dict[str, int] = {}  # per item, the change its row shows when newer than the read
        self._categories = CategoryTotals()  # what the chart shows with no item selected
        warehouses = self.store.list_warehouses()
        # the store lists the default first; asked for alone only to raise UnknownWarehouse when there is none
        default = warehouses[0].code if warehouses else self.store.default_warehouse().code
        opening = None if view.input is None else view.input.model_dump(exclude_unset=True)
        codes, driven = {w.code for w in warehouses}, self.services.tabs.opened_by_agent
        self.state, notice = InventoryState.initial(
            view.data, opening, default, codes, driven=driven, spelled=self._known_category
        )
        self.state.save(view.data)
        # read once, before the page is built (its filter bar lists the categories read with the rest), and after
        # the changes are followed: none committed after the read is missed
        self._follow(self.state.warehouse)
        shown = self._read(next(w.warehouse for w in warehouses if w.code == self.state.warehouse))
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
                        self.filters = FilterBar(shown.category_names, self.apply_input)
                    self.table = StockTable(self._pick_item)
                with ui.column().classes("gap-5 w-full"):
                    with ui.card().classes("w-full p-5 shadow-sm").props("flat bordered"):
                        reorder = self._reorder if self.host else None
                        self.item = ItemPanel(self._adjust, lambda: self.select(None), reorder)
                    with ui.card().classes("w-full p-5 gap-2 shadow-sm").props("flat bordered"):
                        self.chart = StockChart()
                    with ui.card().classes("w-full p-5 gap-1 shadow-sm").props("flat bordered"):
                        with ui.row().classes("w-full items-baseline justify-between"):
                            ui.label("Recent movements").classes("text-base font-semibold text-gray-800")
                            ui.label("times in UTC").classes("text-xs text-gray-400")
                        self.feed = MovementFeed(FEED_SIZE)
            with Island().classes("hidden"):  # its updates re-render it alone
                self.calls = BrowserCalls((self.table, self.feed, self.kpis, self.chart))  # and the search's
        self._show(shown)
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
        return tuple(self._by_sku.values())

    def agent_acted(self) -> None:
        """An agent called a tool on this view: the status line says it is driven."""
        if not self.state.driven:
            self._set(replace(self.state, driven=True))
            self.header.status.set_driven(True)

    def apply_input(self, changes: dict[str, Any]) -> None:
        """Apply sent input fields; an unknown warehouse raises `UnknownWarehouse` and changes nothing."""
        state = self.state.with_filters(changes)
        if state.warehouse == self.state.warehouse:
            self._set(replace(state, category=self._known_category(state.category)))
            self._show_filtered()
        else:
            warehouse = self.store.get_warehouse(state.warehouse)
            self._set(replace(state, warehouse=warehouse.code, category=self._known_category(state.category)))
            self.refresh(warehouse)
        self.notice.set_visibility(False)

    @property
    def history(self) -> tuple[Movement, ...]:
        """The selected item's last movements, newest first, as its chart shows them (none without a selection)."""
        return self._history

    def select(self, item: StockRow | None) -> None:
        """Select an item (None: none): only the selection is shown again, not the whole view."""
        self._set(replace(self.state, selected=None if item is None else item.sku))
        self._show_selection(item)
        self.calls.send()

    def refresh(self, warehouse: Warehouse | None = None) -> None:
        """Read everything the view shows from the store (`warehouse`: the shown one as the caller has just read it,
        else it is read here); the page is sent only what differs from what it shows."""
        self._follow(self.state.warehouse)
        self._show(self._read(warehouse or self.store.get_warehouse(self.state.warehouse)))

    def catch_up(self) -> None:
        """Apply the changes published so far now (the acting view, before its call returns and is confirmed)."""
        if self._subscription is not None:
            self._subscription.deliver_now()

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

    def _read(self, warehouse: Warehouse) -> Overview:
        """Read what the view shows of `warehouse` (the state's) in one go, and keep its rows and version."""
        state = self.state
        shown = self.store.overview(
            warehouse, state.filters, selected=state.selected, movements=FEED_SIZE, history=HISTORY_SIZE
        )
        self._version = self._read_version = shown.version
        self._row_versions = {}
        self._by_sku = {row.sku: row for row in shown.rows}
        return shown

    def _show(self, shown: Overview) -> None:
        """Show what `_read` read: the page is sent only what differs from what it shows."""
        state, calls = self.state, self.calls
        self.header.show(state.warehouse)
        self.header.status.set_driven(state.driven)
        self.kpis.update(shown.kpis, calls)
        self.filters.show(state.search, state.category, state.low_stock_only, calls)
        self._show_count()
        self._show_selection(shown.selected, shown)
        self.feed.show(shown.movements)
        calls.send()

    def _read_rows(self) -> None:
        """Read the rows the filters let through, and the store's version they show."""
        state, store = self.state, self.store
        version = store.version()  # before reading: a change committed meanwhile is newer, and is applied
        self._read_version, self._row_versions = version, {}
        rows = store.list_stock(
            state.warehouse, search=state.search, category=state.category, low_stock_only=state.low_stock_only
        )
        self._by_sku = {row.sku: row for row in rows}

    def _show_filtered(self) -> None:
        """Only the filters changed: the rows and their count; the totals, the feed and the chart do not depend on
        them. A selected item is read again with the rows: a change they hold, applied when its event comes, skips
        them and would skip the item panel too."""
        state, calls = self.state, self.calls
        self._read_rows()
        self.filters.show(state.search, state.category, state.low_stock_only, calls)
        self._show_count()
        if state.selected is None:
            self.table.show(self.rows, None, calls)
        else:
            self._show_selection(self.store.get_stock(state.selected, state.warehouse))
        calls.send()

    def _follow(self, warehouse: str) -> None:
        """Receive the changes of the shown warehouse (and no other)."""
        if self._subscription is not None and self._subscription.topic == topic(warehouse):
            return
        self._unfollow()
        self._subscription = self.services.events.subscribe_batches(topic(warehouse), self._changed)
        if self._resync is None:
            self._resync = self.services.events.subscribe(RESYNC, self._missed)

    def _unfollow(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None

    def _close(self) -> None:
        """The tab is gone: no event reaches this view (nor keeps it in memory) any more."""
        self._unfollow()
        if self._resync is not None:
            self._resync.close()
            self._resync = None

    def _missed(self, _event: Event) -> None:
        """Changes of other workers may have been lost on the way (Redis came back): read everything again."""
        if self.root.is_deleted:
            self._close()
            return
        with self.root:
            self.refresh()

    def _changed(self, events: tuple[Event, ...]) -> None:
        """The changes since this view's last update (a burst arrives merged, `AppEvents.subscribe_batches`), shown as
        one update: the newest rows, totals and chart, and every movement."""
        if self.root.is_deleted:  # the tab was rebuilt or taken over: this instance is gone
            self._close()
            return
        rows: dict[str, StockRow] = {}
        movements: list[Movement] = []
        newest: WarehouseChange | None = None
        totals = False  # whether a category's totals changed
        versions, read = self._row_versions, self._read_version
        for event in events:
            change = change_from_text(event.text)
            if change.warehouse != self.state.warehouse:
                continue
            version = change.version
            totals |= self._categories.merge(change.touched_categories, version)
            # changes of several workers may arrive out of order: each row shows the newest change of its item (each
            # category's totals that of the category), the KPIs the newest change of all
            fresh = False
            for row in change.rows:
                if version > versions.get(row.sku, read):
                    versions[row.sku] = version
                    rows[row.sku] = row
                    fresh = True
            if not fresh and version <= self._version:
                continue
            movements += change.movements
            if version > self._version:
                self._version, newest = version, change
        if rows or newest is not None or totals:
            self._apply(tuple(rows.values()), tuple(movements), newest)

    def _apply(
        self, rows: tuple[StockRow, ...], movements: tuple[Movement, ...], newest: WarehouseChange | None
    ) -> None:
        """Show committed changes: patch the rows they touched (`rows`: those they are the newest change of), add
        their movements, update the KPIs (`newest`: the newest change this view got) and the category totals."""
        state, shown, calls = self.state, self._by_sku, self.calls
        changed: list[StockRow] = []
        removed: list[str] = []
        added = False
        for row in rows:
            if state.shows(row):
                before = shown.get(row.sku)
                if before != row:
                    changed.append(row)
                    shown[row.sku] = row
                    added |= before is None
            elif row.sku in shown:
                removed.append(row.sku)
                del shown[row.sku]
        if changed or removed:
            if added or removed:  # items came or went: back in the store's order (an updated item keeps its place)
                self._by_sku = dict(sorted(shown.items()))
                self._show_count()
            self.table.apply(changed, removed, state.selected, calls)
        if newest is not None:
            self.kpis.update(newest.kpis, calls)
        mine = None if state.selected is None else next((row for row in rows if row.sku == state.selected), None)
        if mine is not None:
            self.item.show(mine)
            fresh = [m for m in movements if m.sku == mine.sku and m not in self._history]
            self._history = tuple(sorted((*fresh, *self._history), key=lambda m: (m.at, m.id), reverse=True))
            self._history = self._history[:HISTORY_SIZE]
            self.chart.show_history(mine.sku, self._history, mine.reorder_point, calls)
        elif state.selected is None:
            self.chart.show_categories(self._categories.rows, state.warehouse, calls)
        self.feed.add(movements, calls)
        calls.send()

    def _show_selection(self, selected: StockRow | None, shown: Overview | None = None) -> None:
        """The rows with `selected` (the state's selected item) marked, the item panel, and the chart: the selected
        item's history, else the warehouse's categories (those `shown` holds, else read now)."""
        state, store, calls = self.state, self.store, self.calls
        self.table.show(self.rows, state.selected, calls)
        self.item.show(selected)
        if self.host is not None:
            self.host.selected(selected)
        if shown is not None:
            self._categories.reset(shown.categories, shown.version)
        if selected is not None:
            self._history = (
                shown.history
                if shown is not None
                else store.recent_movements(state.warehouse, sku=selected.sku, limit=HISTORY_SIZE)
            )
            self.chart.show_history(selected.sku, self._history, selected.reorder_point, calls)
        else:
            self._history = ()
            if shown is None:
                self._categories.read(store, state.warehouse)
            self.chart.show_categories(self._categories.rows, state.warehouse, calls)

    def _show_count(self) -> None:
        count = len(self._by_sku)
        text = f"{count} item{'' if count == 1 else 's'} shown"
        if self.count.text != text:  # set to itself, a text still walks its bindings
            self.count.set_text(text)

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
        ui.notify(f"{sku}: stock changed by {delta:+d}.", type="positive")
        return None
