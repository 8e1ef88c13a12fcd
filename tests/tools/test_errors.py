"""Tool error envelopes: argument validation (one hint per error kind), discriminator, unknown tool, internal errors."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel

from tests.support.tool_samples import (
    ITEMS,
    Adjust,
    Lenient,
    Line,
    fields_of,
    ignore,
    inventory_tool,
    text,
)
from webapp import Tool, ToolRegistry

# -- validation envelopes ---------------------------------------------------------------------------------------------


async def test_missing_fields_get_provide_this_field() -> None:
    result = await Tool("adjust", description="d", handler=ignore, input=Adjust).call({})
    assert text(result).startswith('<validation_error action="adjust">\n')
    assert fields_of(result)[0] == '<field name="sku">Field required You sent: (missing). Provide this field.</field>'
    assert text(result).endswith(
        "\n<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>"
        "\n</validation_error>"
    )


async def test_each_error_kind_gets_its_hint_and_each_value_kind_its_you_sent_form() -> None:
    args = {
        "action": "adjust",
        "sku": 5,
        "delta": 100,
        "price": 10.0,
        "kind": "screw",
        "mode": None,
        "lines": [{"sku": "A", "qty": 0, "x": [1, 2]}],
        "flag": "maybe",
        "extra": "y" * 60,
    }
    result = await inventory_tool().call(args)
    assert text(result).startswith('<validation_error action="inv/adjust">\n')
    assert fields_of(result) == [
        '<field name="sku">Input should be a valid string You sent: 5. Expected type: string.</field>',
        '<field name="delta">Input should be less than 100 You sent: 100. Must be &lt; 100.</field>',
        '<field name="price">Input should be less than or equal to 9.5 You sent: 10. Must be &lt;= 9.5.</field>',
        "<field name=\"kind\">Input should be 'bolt' or 'nut' You sent: 'screw'. Valid options: 'bolt', 'nut'.</field>",
        "<field name=\"mode\">Input should be 'add' or 'set' You sent: null. Valid options: 'add', 'set'.</field>",
        '<field name="lines.0.qty">Input should be greater than or equal to 1 You sent: 0. Must be >= 1.</field>',
        '<field name="lines.0.x">Extra inputs are not permitted You sent: array(2). '
        "Remove or correct unrecognized fields: 'x'. Check for typos.</field>",
        "<field name=\"flag\">Input should be a valid boolean, unable to interpret input You sent: 'maybe'. "
        "Expected type: boolean.</field>",
        '<field name="extra">Extra inputs are not permitted You sent: \'' + "y" * 47 + "...'. "
        "Remove or correct unrecognized fields: 'extra'. Check for typos.</field>",
    ]


async def test_an_error_without_a_hint_ends_after_you_sent() -> None:
    result = await inventory_tool().call(
        {"action": "adjust", "sku": "x", "delta": -100, "price": 1, "kind": "nut", "mode": "add", "lines": {}}
    )
    assert fields_of(result) == [
        "<field name=\"sku\">String should have at least 2 characters You sent: 'x'.</field>",
        '<field name="delta">Input should be greater than -100 You sent: -100. Must be > -100.</field>',
        '<field name="lines">Input should be a valid list You sent: object. Expected type: array.</field>',
    ]


async def test_a_string_of_exactly_fifty_characters_is_shown_whole_and_booleans_as_json() -> None:
    result = await Tool("t", description="d", handler=ignore, input=Lenient).call({"sku": True})
    assert fields_of(result) == [
        '<field name="sku">Input should be a valid string You sent: true. Expected type: string.</field>'
    ]
    result = await Tool("t", description="d", handler=ignore, input=Line).call({"sku": "z" * 50})
    assert fields_of(result) == ['<field name="qty">Field required You sent: (missing). Provide this field.</field>']
    result = await Tool("t", description="d", handler=ignore, input=Line).call({"sku": 1, "qty": "z" * 50})
    assert f"You sent: '{'z' * 50}'." in fields_of(result)[1]


async def test_unknown_properties_are_rejected_even_when_the_model_ignores_extras() -> None:
    result = await Tool("t", description="d", handler=ignore, input=Lenient).call({"sku": "A", "qty": 1})
    assert fields_of(result) == [
        '<field name="qty">Extra inputs are not permitted You sent: 1. '
        "Remove or correct unrecognized fields: 'qty'. Check for typos.</field>"
    ]


async def test_a_tool_without_input_rejects_any_argument() -> None:
    result = await Tool("ping", description="d", handler=lambda: "pong").call({"loud": {"a": 1}})
    assert fields_of(result) == [
        '<field name="loud">Extra inputs are not permitted You sent: object. '
        "Remove or correct unrecognized fields: 'loud'. Check for typos.</field>"
    ]


async def test_union_members_do_not_appear_in_the_field_path() -> None:
    class Either(BaseModel):
        ref: int | str

    result = await Tool("t", description="d", handler=ignore, input=Either).call({"ref": [1]})
    assert [line.split(">")[0] for line in fields_of(result)] == ['<field name="ref"', '<field name="ref"']


# -- discriminator, unknown tool, internal errors -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "code", "message"),
    [
        ("", "MISSING_DISCRIMINATOR", 'The required field "action" is missing.'),
        (None, "INVALID_DISCRIMINATOR", 'Discriminator field "action" must be a string, got object.'),
        (["get"], "INVALID_DISCRIMINATOR", 'Discriminator field "action" must be a string, got object.'),
        ({"a": 1}, "INVALID_DISCRIMINATOR", 'Discriminator field "action" must be a string, got object.'),
        (True, "INVALID_DISCRIMINATOR", 'Discriminator field "action" must be a string, got boolean.'),
        (1.5, "INVALID_DISCRIMINATOR", 'Discriminator field "action" must be a string, got number.'),
        ("GET", "UNKNOWN_ACTION", 'The action "GET" does not exist.'),
    ],
)
async def test_discriminator_errors_name_the_problem_and_list_the_actions(value: Any, code: str, message: str) -> None:
    result = await inventory_tool().call({"action": value})
    lines = text(result).split("\n")
    assert result.is_error
    assert lines[:3] == [
        f'<tool_error code="{code}">',
        f"<message>{message}</message>",
        "<available_actions>get, adjust</available_actions>",
    ]


async def test_an_unknown_tool_gets_the_unknown_tool_envelope() -> None:
    result = await ToolRegistry([inventory_tool()]).call("nope", None)
    assert text(result) == (
        '<tool_error code="UNKNOWN_TOOL" severity="error">\n<message>Tool "nope" does not exist.</message>\n'
        "<recovery>Check the available tools via tools/list and call a valid one.</recovery>\n</tool_error>"
    )


async def test_a_handler_exception_becomes_internal_error_and_the_traceback_goes_to_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> None:
        raise RuntimeError("stock db <down>")

    with caplog.at_level(logging.ERROR, logger="webapp.tools.registry"):
        result = await Tool("ping", description="d", handler=broken).call(None)
    assert result.is_error
    assert text(result) == (
        '<tool_error code="INTERNAL_ERROR" severity="error">\n'
        "<message>[ping] stock db &lt;down></message>\n"
        "<recovery>This may be a transient error. Retry the same call with identical parameters.</recovery>\n"
        "</tool_error>"
    )
    assert "Traceback" not in text(result)
    assert any(record.exc_info is not None and "ping" in record.getMessage() for record in caplog.records)


async def test_data_that_does_not_fit_the_presenter_becomes_internal_error() -> None:
    tool = Tool("item", description="d", handler=lambda: {"sku": 1}, returns=ITEMS)
    result = await tool.call({})
    assert result.is_error
    assert text(result).split("\n")[1:5] == [
        "<message>[item] [Item Presenter] Validation failed:",
        "  • 'sku': Input should be a valid string",
        "  • 'name': Field required",
        "  • 'on_hand': Field required</message>",
    ]
