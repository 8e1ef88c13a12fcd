"""The inventory view's saved state and its number formats, without a browser."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from views.inventory.format import money, signed, units, when
from views.inventory.state import InventoryState


def test_state_round_trips_through_the_views_data_dict_in_place() -> None:
    data: dict[str, Any] = {}
    held = data  # the framework keeps this very dict
    InventoryState(
        "HAM", search="bolt", category="Fasteners", low_stock_only=True, selected="FST-1001", driven=True
    ).save(data)
    assert held is data
    assert InventoryState.load(held) == InventoryState("HAM", "bolt", "Fasteners", True, "FST-1001", True)
    assert InventoryState.load({}) is None


def test_only_the_sent_fields_change_and_a_new_warehouse_drops_the_selection() -> None:
    state = InventoryState("BER", search="bolt", selected="FST-1001")
    assert state.with_filters({"low_stock_only": True}) == InventoryState("BER", "bolt", None, True, "FST-1001")
    assert state.with_filters({"search": None, "category": " Safety "}) == InventoryState(
        "BER", None, "Safety", selected="FST-1001"
    )
    assert state.with_filters({"warehouse_code": "ham"}) == InventoryState("HAM", search="bolt")
    assert state.with_filters({"warehouse_code": "ber"}).selected == "FST-1001"


def test_a_view_starts_from_its_saved_state_else_its_opening_input_else_the_default_warehouse() -> None:
    codes, asked = {"BER", "HAM"}, []

    def driven() -> bool:
        asked.append("driven")
        return True

    def spelled(category: str | None) -> str | None:
        return None if category is None else category.title()

    saved = {"warehouse": "HAM", "search": "bolt"}
    assert InventoryState.initial(saved, None, "BER", codes, driven=driven, spelled=spelled) == (
        InventoryState("HAM", search="bolt"),
        None,
    )
    assert asked == []  # a restored view keeps who drove it
    opening = {"warehouse_code": "ham", "category": "safety"}
    assert InventoryState.initial({}, opening, "BER", codes, driven=driven, spelled=spelled) == (
        InventoryState("HAM", category="Safety", driven=True),
        None,
    )
    gone = {"warehouse": "OLD"}
    assert InventoryState.initial(gone, None, "BER", codes, driven=driven, spelled=spelled) == (
        InventoryState("BER", driven=True),
        None,
    )
    assert InventoryState.initial({}, {"warehouse_code": "lon"}, "BER", codes, driven=driven, spelled=spelled) == (
        InventoryState("BER", driven=True),
        "The warehouse 'LON' no longer exists. Showing BER instead.",
    )


def test_figures_are_written_for_people() -> None:
    assert units(12345) == "12,345"
    assert (signed(5), signed(-3)) == ("+5", "−3")
    assert (money(123456), money(5), money(-250)) == ("€1,234.56", "€0.05", "−€2.50")
    now = datetime(2025, 3, 14, 18, 0, tzinfo=UTC)
    assert when(datetime(2025, 3, 14, 9, 30, tzinfo=UTC), now) == "09:30"
    assert when(datetime(2025, 3, 12, 9, 30, tzinfo=UTC), now) == "12 Mar 09:30"
