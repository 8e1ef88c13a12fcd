"""Tools: input schemas, `_select`, reserved properties, handlers, implicit wrapping and the registry."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from docs.examples.everything import CONTACT_KEYWORDS, Contact
from tests.support.tool_samples import (
    ITEMS,
    ROW,
    Adjust,
    Item,
    ItemId,
    Lenient,
    get_item,
    ignore,
    inventory_tool,
    text,
    texts,
)
from webapp import Presenter, Tool, ToolRegistry, error_builder, response, success, ui
from webapp.tools.schema import SELECT_DESCRIPTION

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


def test_the_keywords_of_an_input_models_schema_are_listed_as_written() -> None:
    schema = Tool("contact", description="d", handler=ignore, input=Contact).input_schema
    assert {key: schema[key] for key in CONTACT_KEYWORDS} == CONTACT_KEYWORDS
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["properties"]["address"] == {"$ref": "#/$defs/address"}
    assert list(schema["properties"]) == ["name", "address", "contactMethod", "phone", "email"]
    assert schema["additionalProperties"] is False and "title" not in schema and "description" not in schema


def test_a_model_that_ignores_extra_keys_still_lists_additional_properties_false() -> None:
    class Loose(Lenient):
        """Pydantic lists this docstring as the schema's description; the tool has its own."""

        model_config = ConfigDict(extra="allow")

    assert Tool("t", description="d", handler=ignore, input=Loose).input_schema == {
        "type": "object",
        "properties": {"sku": {"title": "Sku", "type": "string"}},
        "required": ["sku"],
        "additionalProperties": False,
    }


def test_an_action_whose_model_has_keywords_beyond_its_properties_is_a_definition_error() -> None:
    tool = Tool("contacts", description="d").action("get", get_item, input=ItemId)
    with pytest.raises(ValueError, match=r"action 'add' has the schema keywords \['\$schema', 'allOf', 'else', 'if'"):
        tool.action("add", ignore, input=Contact)
    assert [action.name for action in tool.actions] == ["get"]


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
