"""The category totals a view's chart shows, merged from the changes the store publishes (each brings the totals of
its own categories only): real stores on SQLite files, no browser."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from actions.changes import WarehouseChange, topic
from actions.domain import Item
from actions.queries import INSERT_ITEM, item_params
from actions.store import SqlInventoryStore
from views.inventory.categories import CategoryTotals
from webapp import AppEvents, Event, Subscription, open_database


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlInventoryStore]:
    with SqlInventoryStore(tmp_path / "inventory.db", events=AppEvents()) as opened:
        yield opened


def _changes(store: SqlInventoryStore) -> tuple[list[WarehouseChange], Subscription]:
    """The changes of BER the store publishes from now on, in the list, once delivered."""
    changes: list[WarehouseChange] = []

    def keep(event: Event) -> None:
        assert isinstance(event.payload, dict)
        changes.append(WarehouseChange.from_json(event.payload))

    return changes, store.events.subscribe(topic("BER"), keep)


async def test_each_category_keeps_the_totals_of_its_newest_change_whatever_order_the_changes_arrive_in(
    store: SqlInventoryStore,
) -> None:
    totals = CategoryTotals()
    totals.read(store, "BER")
    changes, subscription = _changes(store)
    store.adjust_stock("FST-1001", "BER", 1, reason="Receipt", actor="agent")
    store.adjust_stock("FST-1002", "BER", 2, reason="Receipt", actor="person")
    store.adjust_stock("SAF-5001", "BER", 3, reason="Receipt", actor="agent")
    subscription.deliver_now()
    first, second, safety = changes
    touched = [[row.group for row in change.touched_categories] for change in changes]
    assert touched == [["Fasteners"], ["Fasteners"], ["Safety"]]

    assert totals.merge(safety.touched_categories, safety.version)
    assert totals.merge(second.touched_categories, second.version)  # older than Safety's, the newest of Fasteners
    assert not totals.merge(first.touched_categories, first.version)  # late: Fasteners shows a newer change
    assert totals.rows == store.report("category", warehouse="BER")

    totals.read(store, "BER")  # after all three: none of them is newer
    assert not totals.merge(first.touched_categories, first.version)
    assert totals.rows == store.report("category", warehouse="BER")


async def test_a_category_the_read_did_not_have_goes_where_the_report_places_it(
    store: SqlInventoryStore, tmp_path: Path
) -> None:
    totals = CategoryTotals()
    totals.read(store, "BER")
    glue = Item("ADH-9001", "Wood glue 750 g", "adhesives", "pcs", 690, 4, "", 0, "")
    with closing(open_database(tmp_path / "inventory.db")) as conn:  # an item of a new category, added since
        conn.execute(INSERT_ITEM, item_params(glue))
    changes, subscription = _changes(store)
    store.adjust_stock("ADH-9001", "BER", 12, reason="First delivery", actor="person")
    subscription.deliver_now()

    assert totals.merge(changes[0].touched_categories, changes[0].version)
    report = store.report("category", warehouse="BER")
    assert totals.rows == report  # the others as read, "adhesives" first: the report orders by folded name
    assert report[0].group == "adhesives" and report[0].units_on_hand == 12
