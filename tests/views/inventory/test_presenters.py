"""The inventory Presenters and tools without a browser: real SQLite in a tmp folder, the real tool pipeline."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from actions.domain import StockRow
from actions.inputs import AdjustStockInput, TransferStockInput
from actions.inventory_tools import export_rows
from actions.presenters import LIST_LIMIT, REPORT, STOCK_ITEM, STOCK_LIST, WAREHOUSES
from actions.shapes import item_data, report_data, warehouse_data
from actions.store import SqlInventoryStore
from actions.warehouses_tool import warehouses_tool
from webapp.responses.toon import toon_encode
from webapp.testing import meta, texts

NOW = datetime(2025, 3, 14, 9, 30, tzinfo=UTC)
HIDDEN = ("supplier_cost_cents", "internal_notes", "orders@", "schraubwerk")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlInventoryStore]:
    with SqlInventoryStore(tmp_path / "inventory.db", clock=lambda: NOW) as opened:
        yield opened


def _low_row(store: SqlInventoryStore) -> StockRow:
    return next(row for row in store.list_stock("BER") if row.low_stock)


def test_an_item_shows_only_its_agent_fields_with_the_supplier_email_redacted(store: SqlInventoryStore) -> None:
    row = store.get_stock("FST-1001", "BER")
    result = STOCK_ITEM.make(item_data(row)).build()
    side = meta(result)
    assert side is not None
    assert side.data == {
        "sku": "FST-1001",
        "name": row.name,
        "category": "Fasteners",
        "unit": "box",
        "on_hand": row.on_hand,
        "reserved": row.reserved,
        "available": row.available,
        "reorder_point": 20,
        "unit_cost_cents": 1290,
        "supplier_email": "[REDACTED]",
    }
    text = "\n".join(texts(result))
    assert not any(secret in text for secret in HIDDEN)
    assert "unit_cost_cents: Cost of one unit in CENTS. Divide by 100." in side.system_rules


def test_a_low_stock_item_suggests_restocking_it_by_at_least_its_shortfall(store: SqlInventoryStore) -> None:
    row = _low_row(store)
    result = STOCK_ITEM.make(item_data(row)).build()
    shortfall = row.reorder_point - row.available
    suggestions = texts(result)[-1]
    assert suggestions.startswith("<action_suggestions>\n- inventory_adjust_stock: ")
    assert f"({row.available} < {row.reorder_point})" in suggestions
    assert f"at least {shortfall} {row.unit}" in suggestions
    assert "- inventory_transfer_stock: " in suggestions


def test_a_selected_item_embeds_its_movements_as_a_history_chart_and_a_table(store: SqlInventoryStore) -> None:
    row = store.get_stock("TLS-2002", "BER")
    movements = store.recent_movements("BER", sku="TLS-2002", limit=10)
    result = STOCK_ITEM.make(item_data(row, movements)).build()
    blocks = texts(result)
    side = meta(result)
    assert side is not None and "movements" not in side.data
    assert any(
        b.startswith('<ui_passthrough type="echarts" title="Stock history of TLS-2002" width="full">') for b in blocks
    )
    table = next(
        b for b in blocks if b.startswith('<ui_passthrough type="markdown" title="Last movements of TLS-2002">')
    )
    assert table.count("\n| 20") == len(movements)  # one table row per movement, each starting with its date


def test_the_stock_list_is_cut_at_fifty_rows_and_says_so(store: SqlInventoryStore) -> None:
    rows = store.list_stock("BER")
    assert len(rows) > LIST_LIMIT
    result = STOCK_LIST.make(list(rows)).build()
    side = meta(result)
    assert side is not None and len(side.data) == LIST_LIMIT
    hidden = len(rows) - LIST_LIMIT
    assert side.ui_blocks[0].content == (
        f"📊 **Summary**: ⚠️ Dataset truncated. {LIST_LIMIT} shown, {hidden} hidden. Use filters to narrow results."
    )
    assert all(item["supplier_email"] == "[REDACTED]" for item in side.data)


def test_a_report_answers_with_a_bar_chart_a_markdown_table_and_a_summary(store: SqlInventoryStore) -> None:
    groups = report_data(store.report("warehouse"))
    side = meta(REPORT.make(groups).build())
    assert side is not None
    assert [g["group"] for g in side.data] == ["BER", "HAM", "MUC"]
    assert set(side.data[0]) == {"group", "items", "units_on_hand", "stock_value_cents", "low_stock"}
    assert [(b.type, b.title) for b in side.ui_blocks] == [
        ("echarts", "Stock totals per group"),
        ("markdown", "Totals"),
        ("summary", None),
    ]
    assert side.ui_blocks[1].content.startswith("| group | items | units on hand | stock value | low stock |")


def test_the_export_holds_every_row_of_the_warehouse_without_hidden_fields(store: SqlInventoryStore) -> None:
    rows = export_rows(store, "HAM")
    assert len(rows) == len(store.list_stock("HAM"))
    assert list(rows[0]) == STOCK_ITEM.schema_keys()
    encoded = toon_encode(rows)
    assert encoded.startswith(f"[{len(rows)}|]{{sku|name|category|unit|on_hand|")
    assert not any(secret in encoded for secret in HIDDEN)


def test_warehouse_rows_carry_code_name_city_items_and_units(store: SqlInventoryStore) -> None:
    side = meta(WAREHOUSES.make([warehouse_data(w) for w in store.list_warehouses()]).build())
    assert side is not None
    units = sum(row.on_hand for row in store.list_stock("BER"))
    assert side.data[0] == {
        "code": "BER",
        "name": "Berlin Central",
        "city": "Berlin",
        "items": 60,
        "units_on_hand": units,
    }


async def test_the_warehouses_tool_lists_gets_and_refuses_an_unknown_code(store: SqlInventoryStore) -> None:
    tool = warehouses_tool(store)
    assert tool.description.startswith(
        "Lists the warehouses with their totals, or gets one by its code. Select operation via the `action` "
        "parameter.\n\n[2|]{action|desc|required}:\n  list|All warehouses with their item count and units on hand|"
    )
    assert tool.input_schema["properties"]["_select"]["items"]["enum"] == [
        "city",
        "code",
        "items",
        "name",
        "units_on_hand",
    ]
    listed = meta(await tool.call({"action": "list", "_select": ["code"]}))
    assert listed is not None and listed.data == [{"code": "BER"}, {"code": "HAM"}, {"code": "MUC"}]
    got = meta(await tool.call({"action": "get", "code": "ham"}))
    assert got is not None and got.data["name"] == "Hamburg Port"
    missing = await tool.call({"action": "get", "code": "XYZ"})
    assert missing.is_error
    assert texts(missing) == [
        '<tool_error code="NOT_FOUND" severity="error">\n'
        "<message>No warehouse has the code 'XYZ'.</message>\n"
        "<recovery>List the warehouses with the warehouses tool (action 'list') and use one of their codes."
        "</recovery>\n"
        "<available_actions>\n  <action>warehouses</action>\n</available_actions>\n"
        "</tool_error>"
    ]


def test_inputs_refuse_a_zero_delta_and_a_transfer_to_the_same_warehouse() -> None:
    with pytest.raises(ValueError, match="delta must not be 0"):
        AdjustStockInput(sku="FST-1001", delta=0, reason="count")
    with pytest.raises(ValueError, match="must differ from from_warehouse"):
        TransferStockInput(sku="FST-1001", from_warehouse="BER", to_warehouse="ber", quantity=1)
