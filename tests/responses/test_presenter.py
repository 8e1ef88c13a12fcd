"""Presenter behaviour beyond the wire vectors: sealing, validation, redaction, embeds, callbacks, side door."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

import mcp_types
import pytest
from pydantic import BaseModel, Field, create_model

from webapp import Presenter, PresenterSealedError, PresenterValidationError, Suggestion, ui
from webapp.responses.builder import SideDoor
from webapp.responses.fields import float_free
from webapp.testing import meta


class Line(BaseModel):
    sku: str
    qty: int


class Order(BaseModel):
    id: str
    total_cents: int = Field(description="Money is in cents.")
    note: str | None = None
    lines: list[Line] = []


def door(result: mcp_types.CallToolResult) -> SideDoor:
    found = meta(result)
    assert found is not None
    return found


def texts(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def test_a_configuration_call_after_the_first_make_raises_the_sealed_message() -> None:
    presenter = Presenter("Order", schema=Order)
    presenter.make({"id": "O1", "total_cents": 5})
    with pytest.raises(PresenterSealedError) as raised:
        presenter.rules(["late"])
    assert str(raised.value) == (
        'Presenter "Order" is sealed after first .make() call. Configuration must be done before .make() is called.'
    )
    for late_call in (lambda: presenter.limit(3), lambda: presenter.redact(["id"]), lambda: presenter.auto_rules()):
        with pytest.raises(PresenterSealedError):
            late_call()


def test_invalid_data_raises_a_validation_error_listing_each_problem_with_its_path() -> None:
    with pytest.raises(PresenterValidationError) as raised:
        Presenter("Order", schema=Order).make({"id": 7, "lines": [{"sku": "A", "qty": "x"}]})
    assert str(raised.value) == (
        "[Order Presenter] Validation failed:\n"
        "  • 'id': Input should be a valid string\n"
        "  • 'total_cents': Field required\n"
        "  • 'lines.0.qty': Input should be a valid integer, unable to parse string as an integer"
    )


def test_list_items_are_validated_one_by_one_and_paths_are_relative_to_the_failing_item() -> None:
    data = [{"id": "O1", "total_cents": 1}, "not an order", {"id": 3}]
    with pytest.raises(PresenterValidationError) as raised:
        Presenter("Order", schema=Order).make(data)
    assert raised.value.problems == (("(root)", "Input should be a valid dictionary or object to extract fields from"),)


def test_a_field_the_data_did_not_contain_stays_absent_and_undeclared_fields_are_dropped() -> None:
    result = Presenter("Order", schema=Order).make({"id": "O1", "total_cents": 5, "secret": "x"}).build()
    assert door(result).data == {"id": "O1", "total_cents": 5}


def test_models_and_objects_with_attributes_are_accepted_as_data() -> None:
    class Row:
        id = "O9"
        total_cents = 12

    presenter = Presenter("Order", schema=Order)
    assert texts(presenter.make(Order(id="O1", total_cents=3)).build())[0] == '{\n  "id": "O1",\n  "total_cents": 3\n}'
    assert texts(presenter.make([Row()]).build())[0] == '[\n  {\n    "id": "O9",\n    "total_cents": 12\n  }\n]'


def test_without_a_schema_the_data_passes_through_as_json() -> None:
    result = Presenter("Anything").make({"b": 1.0, "a": [True, None]}).build()
    assert texts(result) == ['{\n  "b": 1,\n  "a": [\n    true,\n    null\n  ]\n}']


def test_auto_rules_come_first_and_can_be_switched_off() -> None:
    on = Presenter("Order", schema=Order).rules(["Static."]).make({"id": "O1", "total_cents": 5}).build()
    off = Presenter("Order", schema=Order).auto_rules(False).rules(["Static."]).make({"id": "O1", "total_cents": 5})
    assert texts(on)[-1] == "<domain_rules>\n- total_cents: Money is in cents.\n- Static.\n</domain_rules>"
    assert texts(off.build())[-1] == "<domain_rules>\n- Static.\n</domain_rules>"


def test_an_empty_list_calls_collection_ui_but_no_rules_function_and_no_suggestions() -> None:
    calls: list[str] = []

    def rules(item: Any, ctx: Any) -> list[str]:
        calls.append("rules")
        return ["dynamic"]

    def suggest(item: Any, ctx: Any) -> list[Suggestion]:
        calls.append("suggest")
        return [Suggestion("orders.get", "Open it")]

    presenter = (
        Presenter("Order", schema=Order)
        .rules(rules)
        .suggest(suggest)
        .collection_ui(lambda items, ctx: [ui.summary(f"{len(items)} orders")])
    )
    assert texts(presenter.make([]).build()) == [
        "[]",
        '<ui_passthrough type="summary">\n📊 **Summary**: 0 orders\n</ui_passthrough>',
    ]
    assert calls == []


def test_static_rules_still_apply_to_an_empty_list() -> None:
    result = Presenter("Order", schema=Order).rules(["Static."]).make([]).build()
    assert texts(result) == ["[]", "<domain_rules>\n- total_cents: Money is in cents.\n- Static.\n</domain_rules>"]


def test_callbacks_get_the_context_and_the_whole_validated_item() -> None:
    seen: list[Any] = []

    def item_ui(item: Any, ctx: Any) -> list[None]:
        seen.append((item, ctx))
        return [None]

    Presenter("Order", schema=Order).ui(item_ui).make({"id": "O1", "total_cents": 5, "x": 1}, {"user": "ann"}, ["id"])
    assert seen == [({"id": "O1", "total_cents": 5}, {"user": "ann"})]


def test_select_is_shallow_per_list_item_and_keeps_the_data_order() -> None:
    rows = [{"id": "O1", "total_cents": 5, "lines": [{"sku": "A", "qty": 1}]}, {"id": "O2", "total_cents": 6}]
    result = Presenter("Order", schema=Order).make(rows, select=["lines", "id"]).build()
    assert door(result).data == [{"id": "O1", "lines": [{"sku": "A", "qty": 1}]}, {"id": "O2"}]


def test_a_bare_string_select_is_not_a_key_list() -> None:
    select: Any = "id"
    result = Presenter("Order", schema=Order).make({"id": "O1", "total_cents": 5}, select=select).build()
    assert door(result).data == {"id": "O1", "total_cents": 5}


def test_redaction_masks_every_path_form_and_leaves_the_callers_data_intact() -> None:
    data: dict[str, Any] = {
        "card": {"number": "4111", "cvv": None},
        "owners": [{"name": "Ann", "ssn": "1"}, {"name": "Bob", "ssn": "2"}],
        "session": {"token": "t1"},
        "api": {"token": "t2"},
        "note": "token",
    }
    paths = ["card.number", "card.cvv", "card.missing", "owners[*].ssn", "owners[1].name", "*.token", "owners[5].x"]
    result = Presenter("Account").redact(paths).make(data).build()
    assert door(result).data == {
        "card": {"number": "[REDACTED]", "cvv": None},
        "owners": [{"name": "Ann", "ssn": "[REDACTED]"}, {"name": "[REDACTED]", "ssn": "[REDACTED]"}],
        "session": {"token": "[REDACTED]"},
        "api": {"token": "[REDACTED]"},
        "note": "token",
    }
    assert data["owners"][1] == {"name": "Bob", "ssn": "2"} and data["card"]["number"] == "4111"


def test_a_callable_censor_gets_the_original_value_and_ui_sees_the_real_one() -> None:
    presenter = (
        Presenter("Card")
        .redact(["number"], lambda value: "****" + value[-2:])
        .ui(lambda item, ctx: [ui.markdown(item["number"])])
    )
    assert texts(presenter.make({"number": "123456"}).build()) == [
        '{\n  "number": "****56"\n}',
        '<ui_passthrough type="markdown">\n123456\n</ui_passthrough>',
    ]


def test_redaction_applies_to_each_item_of_a_list() -> None:
    result = Presenter("Card").redact("number").make([{"number": "1"}, {"number": "2", "x": 1}]).build()
    assert door(result).data == [{"number": "[REDACTED]"}, {"number": "[REDACTED]", "x": 1}]


def test_a_malformed_redaction_path_is_rejected_when_configured() -> None:
    with pytest.raises(ValueError, match="malformed"):
        Presenter("Card").redact(["items[x].y"])
    with pytest.raises(ValueError, match="malformed"):
        Presenter("Card").redact(["a..b"])


def test_an_embedded_child_keeps_its_own_redaction_and_limit() -> None:
    child = Presenter("Line", schema=Line).limit(1).redact(["sku"]).rules(["Quantities are units."])
    parent = Presenter("Order", schema=Order).auto_rules(False).embed("lines", child)
    data = {"id": "O1", "total_cents": 5, "lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]}
    assert texts(parent.make(data).build())[1:] == [
        '<ui_passthrough type="summary">\n📊 **Summary**: ⚠️ Dataset truncated. 1 shown, 1 hidden. '
        "Use filters to narrow results.\n</ui_passthrough>",
        "<domain_rules>\n- Quantities are units.\n</domain_rules>",
    ]


def test_an_embed_whose_value_is_none_is_skipped_and_a_presenter_cannot_embed_itself() -> None:
    child = Presenter("Line", schema=Line).rules(["never"])
    result = Presenter("Order").embed("lines", child).make({"id": "O1", "lines": None}).build()
    assert texts(result) == ['{\n  "id": "O1",\n  "lines": null\n}']
    presenter = Presenter("Loop")
    with pytest.raises(ValueError, match="itself"):
        presenter.embed("child", presenter)


def test_agent_limit_uses_the_truncation_block_and_keeps_the_first_items() -> None:
    presenter = Presenter("Line", schema=Line).agent_limit(2, lambda omitted: ui.markdown(f"{omitted} more"))
    result = presenter.make([{"sku": str(n), "qty": n} for n in range(5)]).build()
    assert [row["sku"] for row in door(result).data] == ["0", "1"]
    assert door(result).ui_blocks == [ui.markdown("3 more")]


def test_schema_keys_are_the_top_level_fields_in_schema_order() -> None:
    assert Presenter("Order", schema=Order).schema_keys() == ["id", "total_cents", "note", "lines"]
    assert Presenter("Free").schema_keys() == []


def test_the_side_door_never_appears_in_a_dump_or_json_of_the_result() -> None:
    result = Presenter("Order", schema=Order).rules(["R"]).make({"id": "O1", "total_cents": 5}).build()
    assert door(result).system_rules == ["total_cents: Money is in cents.", "R"]
    assert not any("side" in key or "rules" in key for key in result.model_dump())
    wire = result.model_dump_json(by_alias=True)
    assert "side_door" not in wire and "system_rules" not in wire and "ui_blocks" not in wire


class Priced(BaseModel):
    sku: str
    price: float
    extra: dict[str, Any] = {}


def test_numbers_print_as_javascript_does_whatever_the_schema() -> None:
    rows = [{"sku": "A", "price": 4500.0, "extra": {"big": 1e21, "n": 2**70}}]
    assert texts(Presenter("Priced", schema=Priced).make(rows).build())[0] == (
        '[\n  {\n    "sku": "A",\n    "price": 4500,\n    "extra": {\n      "big": 1e+21,\n'
        '      "n": 1180591620717411303424\n    }\n  }\n]'
    )
    censored = Presenter("Line", schema=Line).redact(["qty"], lambda qty: qty / 1).make({"sku": "A", "qty": 3})
    assert texts(censored.build())[0] == '{\n  "sku": "A",\n  "qty": 3\n}'


def test_float_free_is_decided_from_the_schema_conservatively() -> None:
    class Tree(BaseModel):
        name: str
        kids: list[Tree] = []

    assert float_free(Order) and float_free(Tree)
    assert not float_free(Priced)
    assert not float_free(create_model("Loose", value=(Any, ...)))

    class Share(Enum):
        HALF = 0.5
        ALL = 1

    assert float_free(create_model("Mode", mode=(Literal["half", 1], ...)))
    assert not float_free(create_model("Ratio", share=(Share, ...)))
