"""Tools: input schemas, `_select`, reserved properties, validation envelopes, handlers and implicit wrapping."""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any, Literal

import mcp_types
import pytest
from pydantic import BaseModel, ConfigDict, Field

from webapp import Presenter, Tool, ToolRegistry, error_builder, response, success, ui
from webapp.tool_schema import SELECT_DESCRIPTION


class Kind(StrEnum):
    BOLT = "bolt"
    NUT = "nut"


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sku: str
    qty: int = Field(ge=1)


class Adjust(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sku: str = Field(min_length=2)
    delta: int = Field(gt=-100, lt=100)
    price: float = Field(le=9.5)
    kind: Kind
    mode: Literal["add", "set"]
    lines: list[Line] = []
    flag: bool = False


class Lenient(BaseModel):  # pydantic's default: extra keys ignored — the pipeline still rejects them
    sku: str


class Item(BaseModel):
    sku: str
    name: str
    on_hand: int


class ItemId(BaseModel):
    sku: str = Field(min_length=2)


ITEMS = Presenter("Item", schema=Item).rules(["Stock is in units."])
ROW = {"sku": "A-1", "name": "Bolt", "on_hand": 4, "cost": 9}


def ignore(params: Any) -> None:
    return None


def text(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


def texts(result: mcp_types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]


def fields_of(result: mcp_types.CallToolResult) -> list[str]:
    assert result.is_error
    return [line for line in text(result).split("\n") if line.startswith("<field")]


def get_item(params: ItemId) -> dict[str, Any]:
    return {**ROW, "sku": params.sku}


def inventory_tool() -> Tool:
    return (
        Tool("inv", description="Inventory")
        .action("get", get_item, input=ItemId, returns=ITEMS)
        .action("adjust", ignore, input=Adjust)
        .enable_select()
    )


# -- input schemas ----------------------------------------------------------------------------------------------------


def test_a_plain_tool_schema_is_the_models_object_schema_without_extra_properties_and_with_defs() -> None:
    schema = Tool("adjust", description="d", handler=ignore, input=Adjust).input_schema
    assert list(schema) == ["type", "properties", "required", "additionalProperties", "$defs"]
    assert schema["additionalProperties"] is False
    assert list(schema["properties"]) == ["sku", "delta", "price", "kind", "mode", "lines", "flag"]
    assert set(schema["$defs"]) == {"Kind", "Line"}
    assert schema["required"] == ["sku", "delta", "price", "kind", "mode"]


def test_a_tool_without_input_has_an_empty_closed_object_schema() -> None:
    schema = Tool("ping", description="d", handler=lambda: "pong").input_schema
    assert schema == {"type": "object", "properties": {}, "additionalProperties": False}


def test_an_action_tool_schema_starts_with_the_action_enum_then_the_union_of_properties() -> None:
    schema = inventory_tool().input_schema
    assert list(schema["properties"]) == ["action", "sku", "delta", "price", "kind", "mode", "lines", "flag", "_select"]
    assert schema["properties"]["action"] == {"type": "string", "enum": ["get", "adjust"]}
    assert schema["required"] == ["action"]
    assert schema["additionalProperties"] is False


def test_two_actions_defining_one_property_differently_is_a_definition_error() -> None:
    class Other(BaseModel):
        sku: int

    tool = Tool("inv", description="d").action("get", get_item, input=ItemId)
    with pytest.raises(ValueError, match=r"actions 'get' and 'count' define the property 'sku' differently"):
        tool.action("count", ignore, input=Other)
    assert [action.name for action in tool.actions] == ["get"]


def test_select_lists_the_sorted_union_of_presenter_keys_with_the_exact_description() -> None:
    other = Presenter("Stock", schema=Adjust)
    tool = inventory_tool().action("stock", lambda: [], returns=other)
    assert tool.input_schema["properties"]["_select"] == {
        "type": "array",
        "description": SELECT_DESCRIPTION,
        "items": {"type": "string", "enum": sorted({"sku", "name", "on_hand", *other.schema_keys()})},
    }
    assert SELECT_DESCRIPTION == (
        "⚡ Context optimization: select only the response fields you need. Omit to receive all fields."
    )


def test_select_without_presenter_keys_adds_no_property() -> None:
    tool = Tool("ping", description="d", handler=lambda: "pong").enable_select()
    assert "_select" not in tool.input_schema["properties"]


def test_reserved_properties_follow_the_model_properties_and_precede_select() -> None:
    view = {"type": "string", "description": "Id of the open view."}
    tool = inventory_tool().reserve("_view", view)
    properties = list(tool.input_schema["properties"])
    assert properties[-2:] == ["_view", "_select"]
    assert tool.input_schema["properties"]["_view"] == view
    assert tool.input_schema["required"] == ["action"]


def test_a_reserved_name_clashing_with_an_input_property_is_rejected() -> None:
    tool = Tool("inv", description="d", handler=get_item, input=ItemId)
    with pytest.raises(ValueError, match="reserved property 'sku'"):
        tool.reserve("sku", {"type": "string"})


def test_with_output_schema_declares_the_models_schema_and_to_mcp_lists_it() -> None:
    tool = Tool("inv", description="Inventory", handler=get_item, input=ItemId).with_output_schema(Item)
    listed = tool.to_mcp()
    assert tool.output_schema == Item.model_json_schema()
    assert listed.output_schema == Item.model_json_schema()
    assert listed.input_schema == tool.input_schema and listed.description == "Inventory"


def test_toon_description_needs_actions() -> None:
    with pytest.raises(ValueError, match="plain tool"):
        Tool("ping", description="d", handler=lambda: "pong").toon_description()


# -- _select at run time --------------------------------------------------------------------------------------------


async def test_select_filters_the_data_block_and_ignores_unknown_keys() -> None:
    result = await inventory_tool().call({"action": "get", "sku": "B-2", "_select": ["on_hand", "bogus", "sku"]})
    assert texts(result) == [
        '{\n  "sku": "B-2",\n  "on_hand": 4\n}',
        "<domain_rules>\n- Stock is in units.\n</domain_rules>",
    ]


@pytest.mark.parametrize("select", [[], "sku", ["sku", 3], None, {"sku": True}])
async def test_a_select_that_is_empty_or_not_a_list_of_strings_does_not_filter(select: Any) -> None:
    result = await inventory_tool().call({"action": "get", "sku": "B-2", "_select": select})
    assert text(result) == '{\n  "sku": "B-2",\n  "name": "Bolt",\n  "on_hand": 4\n}'


async def test_select_on_a_tool_without_enable_select_is_removed_and_not_applied() -> None:
    tool = Tool("item", description="d", handler=get_item, input=ItemId, returns=ITEMS)
    assert "_select" not in tool.input_schema["properties"]
    result = await tool.call({"sku": "B-2", "_select": ["sku"]})
    assert not result.is_error
    assert text(result) == '{\n  "sku": "B-2",\n  "name": "Bolt",\n  "on_hand": 4\n}'


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

    with caplog.at_level(logging.ERROR, logger="webapp.tools"):
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


# -- handlers -------------------------------------------------------------------------------------------------------


async def test_handlers_get_ctx_and_reserved_only_when_they_declare_them() -> None:
    seen: dict[str, Any] = {}

    async def with_all(params: ItemId, *, ctx: Any, reserved: dict[str, Any]) -> str:
        seen.update(sku=params.sku, ctx=ctx, reserved=reserved)
        return "done"

    def plain(params: ItemId) -> str:
        return params.sku

    tool = (
        Tool("inv", description="d")
        .action("all", with_all, input=ItemId)
        .action("plain", plain, input=ItemId)
        .reserve("_view", {"type": "string"})
        .reserve("_trace", {"type": "boolean"})
    )
    assert text(await tool.call({"action": "all", "sku": "A-1", "_view": "v1"}, ctx="the-ctx")) == "done"
    assert seen == {"sku": "A-1", "ctx": "the-ctx", "reserved": {"_view": "v1"}}
    assert text(await tool.call({"action": "plain", "sku": "B-2", "_view": "v1", "_trace": True})) == "B-2"


async def test_sync_and_async_handlers_without_input_are_called_without_params() -> None:
    async def later(ctx: Any) -> str:
        return f"async {ctx}"

    assert text(await Tool("a", description="d", handler=lambda: "sync").call(None)) == "sync"
    assert text(await Tool("b", description="d", handler=later).call({}, ctx=7)) == "async 7"


# -- implicit wrapping ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ["OK"]),
        ("", ["OK"]),
        ("plain text", ["plain text"]),
        ({"total": 4500.0}, ['{\n  "total": 4500\n}']),
        (
            response({"a": 1}).llm_hint("Be brief."),
            ['{\n  "a": 1\n}', "<llm_directives>\n- Be brief.\n</llm_directives>"],
        ),
        (
            error_builder("NOPE", "No.").warning(),
            ['<tool_error code="NOPE" severity="warning">\n<message>No.</message>\n</tool_error>'],
        ),
    ],
)
async def test_return_values_are_wrapped_implicitly(value: Any, expected: list[str]) -> None:
    result = await Tool("t", description="d", handler=lambda: value).call(None)
    assert texts(result) == expected


async def test_a_call_tool_result_passes_unchanged_even_with_a_presenter() -> None:
    own = success("mine")
    result = await Tool("t", description="d", handler=lambda: own, returns=ITEMS).call(None)
    assert result is own


async def test_a_presenter_on_the_action_presents_the_value_with_the_context() -> None:
    presenter = Presenter("Item", schema=Item).ui(lambda item, ctx: [ui.markdown(f"{item['name']} for {ctx}")])
    result = await Tool("t", description="d", handler=lambda: ROW, returns=presenter).call(None, ctx="ann")
    assert texts(result)[1] == '<ui_passthrough type="markdown">\nBolt for ann\n</ui_passthrough>'


# -- registry -------------------------------------------------------------------------------------------------------


def test_a_duplicate_tool_name_is_rejected_naming_both_tools() -> None:
    def first() -> None: ...

    def second() -> None: ...

    registry = ToolRegistry([Tool("ping", description="d", handler=first)])
    with pytest.raises(ValueError, match=r"Two tools are named 'ping'") as raised:
        registry.add(Tool("ping", description="d", handler=second))
    assert "first" in str(raised.value) and "second" in str(raised.value)
    assert [tool.name for tool in registry.tools()] == ["ping"]


def test_a_tool_without_handler_or_actions_cannot_be_registered() -> None:
    with pytest.raises(ValueError, match="neither handler= nor actions"):
        ToolRegistry().add(Tool("empty", description="d"))
