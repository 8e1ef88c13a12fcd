"""The stock that the views showing the same share (`views.inventory.shared`): a change applied once for all of them,
and the calls a view's tab is sent, merged when it takes several changes at once. Real stores on SQLite files and
real app events, no browser."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from actions.changes import topic
from actions.domain import StockFilter
from actions.store import SqlInventoryStore
from views.inventory.format import money, units
from views.inventory.shared import SharedStock, SharedStocks, ShareKey
from webapp import AppEvents

IDS = (10, 11, 12, 13, 14, 15)  # a view's table, feed and four KPI figures, as `PARTS` orders them
SKU = "FST-1001"
EVERYTHING = ShareKey("BER", StockFilter(), None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlInventoryStore]:
    with SqlInventoryStore(tmp_path / "inventory.db", events=AppEvents()) as opened:
        yield opened


def _nobody() -> None:
    """A view that is never asked to take anything in these tests (no read or late draw nudges it)."""


def _join(stocks: SharedStocks, store: SqlInventoryStore, key: ShareKey = EVERYTHING) -> SharedStock:
    return stocks.join(key, _nobody, store=store, events=store.events)


def _calls(text: str | None) -> list[list[Any]]:
    assert text is not None
    return json.loads(f"[{text}]")


def _adjust(store: SqlInventoryStore, stock: SharedStock, reasons: list[str]) -> None:
    """One adjustment per reason, each applied as a step of its own (as when the acting view catches up)."""
    for reason in reasons:
        store.adjust_stock(SKU, "BER", 1, reason=reason, actor="agent")
        stock.catch_up()


async def test_views_that_show_the_same_share_one_stock_which_stops_following_when_none_shows_it(
    store: SqlInventoryStore,
) -> None:
    stocks = SharedStocks()
    first = _join(stocks, store)
    assert _join(stocks, store) is first
    searched = _join(stocks, store, ShareKey("BER", StockFilter(search="hex"), None))
    assert searched is not first
    assert store.events.subscribers(topic("BER")) == 2  # one per stock, however many views show it

    for stock in (first, first, searched):
        stocks.leave(stock, _nobody)
    assert store.events.subscribers(topic("BER")) == 0
    assert _join(stocks, store) is not first  # read again for the next view


async def test_a_view_that_takes_several_changes_at_once_gets_one_call_per_part_with_the_newest_figures(
    store: SqlInventoryStore,
) -> None:
    stock = _join(SharedStocks(), store)
    start = stock.generation
    _adjust(store, stock, ["One", "Two", "Three"])
    assert stock.generation == start + 3

    calls = _calls(stock.text_since(start, IDS))
    targets = [(target, name) for target, name, _arguments, _at_frame in calls]
    assert targets == [(10, "patchRows"), (11, "prepend"), (13, "show"), (14, "show")]  # units and value changed
    (rows, removed), (feed,), (shown_units,), (shown_value,) = (arguments for _, _, arguments, _ in calls)
    row, kpis = store.get_stock(SKU, "BER"), store.warehouse_kpis("BER")
    assert removed == [] and [(each["sku"], each["on_hand"]) for each in rows] == [(SKU, row.on_hand)]
    assert [each["reason"] for each in feed] == ["Three", "Two", "One"]  # every movement, newest first
    assert (shown_units, shown_value) == (units(kpis.units_on_hand), money(kpis.stock_value_cents))
    assert stock.text_since(start, IDS) == stock.text_since(start, IDS)  # made once for views with the same ids

    (patch, _, _, _) = _calls(stock.text_since(start + 2, IDS))  # one step behind: that step's own calls
    assert set(patch[2][0][0]) == {"sku", "on_hand", "available", "stock_value_cents"}  # what changed, not the row


async def test_a_view_further_behind_than_the_kept_steps_is_told_to_take_everything(
    store: SqlInventoryStore,
) -> None:
    stock = _join(SharedStocks(), store)
    start = stock.generation
    _adjust(store, stock, [f"Count {number}" for number in range(65)])
    assert stock.text_since(start, IDS) is None  # the view sends its tab every part whole
    assert [name for _, name, _, _ in _calls(stock.text_since(start + 1, IDS))][:2] == ["patchRows", "prepend"]
