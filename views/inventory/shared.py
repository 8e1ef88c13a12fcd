"""What the inventory views that show one warehouse with the same filters and selection show, kept once for all of
them (`SharedStock`), and the calls that bring their tabs from one state of it to the next.

A change still reaches each view in its own turn of the loop, through the view's own subscription: a watching view
delays the acting call by no more than its turn. The first view of a group that gets the change has the group's stock
apply it, once (reading the change, the versions, the rows' patch, the totals, the KPI texts, the feed's rows and the
chart's figures), and every view of the group then sends its tab the same calls (`SharedStock.text_since`). A view
whose filters or selection change moves to the stock of its new state (`SharedStocks.join`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from actions.changes import WarehouseChange, change_from_text, topic
from actions.domain import Movement, StockFilter, StockRow, Warehouse
from actions.store import InventoryStore
from views.inventory.calls import Call, call_text, encode_arguments
from views.inventory.categories import CategoryTotals
from views.inventory.chart import CategoryFigures, ChartPace, Figures, HistoryFigures
from views.inventory.feed import FeedRows
from views.inventory.kpis import NO_KPIS, KpiTexts, figure_calls, kpi_texts
from views.inventory.state import InventoryState
from views.inventory.stock_table import TableRows
from webapp import RESYNC, AppEvents, Event

__all__ = ["FEED_SIZE", "HISTORY_SIZE", "PARTS", "ShareKey", "SharedStock", "SharedStocks"]

FEED_SIZE = 12
HISTORY_SIZE = 30
PARTS = ("table", "feed", "kpi0", "kpi1", "kpi2", "kpi3")
"""The parts of a view that a stock's calls go to, in the order of the element ids a view gives (`text_since`)."""
_PLACES = {part: place for place, part in enumerate(PARTS)}
_KEPT_STEPS = 64  # the steps kept for views that have not taken them yet; a view further behind gets everything


@dataclass(frozen=True, slots=True)
class _Step:
    """One state a stock moved to: the calls that bring a tab to it from the state before, and what is needed to
    merge several steps into one update: the KPI texts and the feed's movements before it, the skus of the rows it
    patched (None: it set them all), and whether it set the feed whole."""

    calls: tuple[Call, ...]
    kpis: KpiTexts
    feed: frozenset[int]
    rows: frozenset[str] | None
    whole_feed: bool


@dataclass(frozen=True, slots=True)
class ShareKey:
    """What decides everything a view shows of its warehouse's stock."""

    warehouse: str
    filters: StockFilter
    selected: str | None

    @classmethod
    def of(cls, state: InventoryState) -> ShareKey:
        return cls(state.warehouse, state.filters, state.selected)


class SharedStock:
    """One group's rows, totals, KPIs, feed and chart, read from the store once and kept up to date by the warehouse's
    changes; each state it moves to is a step, the calls that bring a tab from the state before to it."""

    def __init__(self, key: ShareKey, store: InventoryStore, events: AppEvents, warehouse: Warehouse | None) -> None:
        self.key = key
        self.members: set[Callable[[], object]] = set()  # how each view takes the steps it has not taken
        self.rows: dict[str, StockRow] = {}  # the rows the filters let through, by sku, in the store's order
        self.table = TableRows()
        self.feed = FeedRows(FEED_SIZE)
        self.kpis = NO_KPIS
        self.categories = CategoryTotals()  # what the chart shows with no item selected
        self.selected: StockRow | None = None  # the selected item's row
        self.history: tuple[Movement, ...] = ()  # the selected item's, newest first
        self.chart = ChartPace(CategoryFigures((), key.warehouse), self._drawn_late)
        self.category_names: tuple[str, ...] = ()  # every category, as the store lists them when read
        self.generation = 0  # the steps made so far
        self._steps: deque[_Step] = deque(maxlen=_KEPT_STEPS)
        self._merged: dict[int, tuple[Call, ...]] = {}  # the steps from a generation to this one, merged
        self._texts: dict[tuple[int, tuple[int, ...]], str] = {}  # the same, as the text for views' element ids
        self._store = store
        self._version = 0  # the newest change the stock shows (a change's version; the store's when it read it)
        self._read_version = 0  # the store's version when the stock was read last
        self._row_versions: dict[str, int] = {}  # per item, the change its row shows when newer than the read
        # followed before the read: no change committed after it is missed
        self._subscription = events.subscribe_batches(topic(key.warehouse), self._changed)
        self._resync = events.subscribe(RESYNC, self._missed)  # changes of other workers may have been lost
        try:
            self.read(warehouse)
        except Exception:  # an unknown warehouse or item: nothing follows what nobody shows
            self.close()
            raise

    def _calls_since(self, generation: int) -> tuple[Call, ...] | None:
        """The calls that bring a tab from `generation` to this one: several steps merged into one call per part (a
        tab that gets a burst's changes at once draws each row and figure once, with every movement); None when some
        of the steps are no longer kept."""
        behind = self.generation - generation
        if behind > len(self._steps):
            return None
        if behind <= 1:
            return self._steps[-1].calls if behind else ()
        merged = self._merged.get(generation)
        if merged is None:
            merged = self._merged[generation] = self._merge(list(self._steps)[-behind:])
        return merged

    def text_since(self, generation: int, ids: tuple[int, ...]) -> str | None:
        """The calls that bring a tab from `generation` to this one (`_calls_since`; None: too far behind), as their
        text for a view whose parts (`PARTS`) are these elements (their ids): made once for the views whose pages gave
        their elements the same ids, as pages built alike do."""
        key = generation, ids
        text = self._texts.get(key)
        if text is None:
            calls = self._calls_since(generation)
            if calls is None:
                return None
            text = self._texts[key] = ",".join(call_text(ids[_PLACES[part]], name, args) for part, name, args in calls)
        return text

    def catch_up(self) -> None:
        """Apply the changes published so far now."""
        self._subscription.deliver_now()

    def read(self, warehouse: Warehouse | None = None) -> None:
        """Read everything from the store (`warehouse`: the caller's read of it, else it is read here), as one step."""
        key, store, (kpis, feed) = self.key, self._store, self._before()
        shown = store.overview(
            warehouse or store.get_warehouse(key.warehouse),
            key.filters,
            selected=key.selected,
            movements=FEED_SIZE,
            history=HISTORY_SIZE,
        )
        self._version = self._read_version = shown.version
        self._row_versions = {}
        self.rows = {row.sku: row for row in shown.rows}
        self.category_names = shown.category_names
        table = self.table.show(shown.rows, key.selected)
        calls = [call for call in (table, self.feed.show(shown.movements)) if call]
        texts = kpi_texts(shown.kpis)
        calls += figure_calls(self.kpis, texts)
        self.kpis = texts
        self.categories.reset(shown.categories, shown.version)
        self.selected, self.history = shown.selected, shown.history
        self.chart.read(self._figures())
        self._step(calls, kpis, feed, None if table else frozenset())

    def nudge(self) -> None:
        """Have every view take the steps it has not taken (after a read or a late draw, which no change brings them):
        one view per turn of the loop, as changes reach them, so a call waits for no more than one view's turn."""
        loop, takes = asyncio.get_running_loop(), iter(tuple(self.members))

        def next_take() -> None:
            take = next(takes, None)
            if take is not None:
                loop.call_soon(next_take)  # first: one view's failure does not leave the others waiting
                take()

        loop.call_soon(next_take)

    def close(self) -> None:
        self._subscription.close()
        self._resync.close()
        self.chart.close()

    def _drawn_late(self) -> None:
        """The chart's newest figures are due without a change to go with: a step of their own."""
        self._step([], *self._before(), frozenset())
        self.nudge()

    def _missed(self, _event: Event) -> None:
        self.read()
        self.nudge()

    def _figures(self) -> Figures:
        """What the chart shows: the selected item's history, else the warehouse's categories."""
        if self.selected is not None:
            return HistoryFigures(self.selected.sku, self.history, self.selected.reorder_point)
        return CategoryFigures(self.categories.rows, self.key.warehouse)

    def _step(self, calls: list[Call], kpis: KpiTexts, feed: frozenset[int], rows: frozenset[str] | None) -> None:
        """A step made (`kpis`, `feed`: as they were before it; `rows`: the skus it patched, None: every row)."""
        whole_feed = any(call[:2] == ("feed", "setRows") for call in calls)
        self._steps.append(_Step(tuple(calls), kpis, feed, rows, whole_feed))
        self.generation += 1
        self._merged.clear()
        self._texts.clear()

    def _merge(self, steps: list[_Step]) -> tuple[Call, ...]:
        calls: list[Call] = []
        table, feed = self.table.rows, self.feed.rows
        if any(step.rows is None for step in steps):
            calls.append(("table", "setRows", encode_arguments(table)))
        elif skus := frozenset[str]().union(*(step.rows for step in steps if step.rows is not None)):
            changed = [row for row in table if row["sku"] in skus]
            removed = sorted(skus - {row["sku"] for row in changed})
            calls.append(("table", "patchRows", encode_arguments(changed, removed)))
        if any(step.whole_feed for step in steps):
            calls.append(("feed", "setRows", encode_arguments(feed)))
        elif fresh := [row for row in feed if row["id"] not in steps[0].feed]:
            calls.append(("feed", "prepend", encode_arguments(fresh)))
        return (*calls, *figure_calls(steps[0].kpis, self.kpis))

    def _before(self) -> tuple[KpiTexts, frozenset[int]]:
        """The KPI texts and the feed's movements now (before a step)."""
        return self.kpis, frozenset(row["id"] for row in self.feed.rows)

    def _changed(self, events: tuple[Event, ...]) -> None:
        """The changes since the last ones (a burst arrives merged, `AppEvents.subscribe_batches`), applied as one
        step: the newest rows, totals and chart, and every movement."""
        rows: dict[str, StockRow] = {}
        movements: list[Movement] = []
        newest: WarehouseChange | None = None
        totals = False  # whether a category's totals changed
        versions, read = self._row_versions, self._read_version
        for event in events:
            change = change_from_text(event.text)
            if change.warehouse != self.key.warehouse:
                continue
            version = change.version
            totals |= self.categories.merge(change.touched_categories, version)
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
            self._apply(tuple(rows.values()), tuple(movements), newest, totals)

    def _apply(
        self, rows: tuple[StockRow, ...], movements: tuple[Movement, ...], newest: WarehouseChange | None, totals: bool
    ) -> None:
        """Patch the rows the changes touched (`rows`: those they are the newest change of), add their movements,
        update the KPIs (`newest`: the newest change got) and the category totals (`totals`: some changed)."""
        key, shown, (kpis, feed) = self.key, self.rows, self._before()
        calls: list[Call] = []
        changed: list[StockRow] = []
        removed: list[str] = []
        added = False
        for row in rows:
            if key.filters.shows(row):
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
                self.rows = dict(sorted(shown.items()))
            calls.append(self.table.apply(changed, removed, key.selected))
        if newest is not None:
            texts = kpi_texts(newest.kpis)
            calls += figure_calls(self.kpis, texts)
            self.kpis = texts
        mine = None if key.selected is None else next((row for row in rows if row.sku == key.selected), None)
        if mine is not None:
            fresh = [m for m in movements if m.sku == mine.sku and m not in self.history]
            history = sorted((*fresh, *self.history), key=lambda m: (m.at, m.id), reverse=True)
            self.selected, self.history = mine, tuple(history[:HISTORY_SIZE])
            self.chart.show(self._figures())
        elif key.selected is None and totals:
            self.chart.show(self._figures())
        if (call := self.feed.add(movements)) is not None:
            calls.append(call)
        self._step(calls, kpis, feed, frozenset((*(row.sku for row in changed), *removed)))


class SharedStocks:
    """The shared stocks of one server's views, by what they show (and the loop they run on)."""

    def __init__(self) -> None:
        self._stocks: dict[tuple[asyncio.AbstractEventLoop, ShareKey], SharedStock] = {}

    def join(
        self,
        key: ShareKey,
        take: Callable[[], object],
        *,
        store: InventoryStore,
        events: AppEvents,
        warehouse: Warehouse | None = None,
    ) -> SharedStock:
        """The stock that shows `key` (read now when no view shows it yet, else brought up to date), with `take` as a
        view of it (`warehouse`: the caller's read of the key's warehouse)."""
        place = asyncio.get_running_loop(), key
        stock = self._stocks.get(place)
        if stock is None:
            stock = self._stocks[place] = SharedStock(key, store, events, warehouse)
        else:
            stock.catch_up()
        stock.members.add(take)
        return stock

    def leave(self, stock: SharedStock, take: Callable[[], object]) -> None:
        """`take`'s view shows `stock` no more; a stock no view shows stops following its changes."""
        stock.members.discard(take)
        if stock.members:
            return
        stock.close()
        for place, each in list(self._stocks.items()):
            if each is stock:
                del self._stocks[place]
