"""Startup checks of `@mcp_app`, `@mcp_app_action` and `@mcp_app_prompt`: names, signatures, schemas and the messages
that say the fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types
import pytest
from pydantic import BaseModel, Field, RootModel

from webapp import BuiltResult, tool_error
from webapp.apps.definition import AppDefinitionError, McpAppUpdateEvent, ViewContext, mcp_app, mcp_app_action
from webapp.apps.naming import app_name, check_claims, collect_app, snake_case
from webapp.apps.prompts import app_prompts, mcp_app_prompt
from webapp.tools.prompts import complete_with


class Warehouse(BaseModel):
    code: str = "W1"


class Amount(BaseModel):
    qty: int


class Stock(BaseModel):
    sku: str
    qty: int


class Codes(RootModel[list[str]]):
    pass


class StockActions:
    @mcp_app_action(description="Counts the stock.")
    def count(self, view: Any, params: Amount) -> Stock:
        return Stock(sku="A", qty=params.qty)


@mcp_app(description="Shows stock.", route="/sales/inventory", input=Warehouse, actions=(StockActions,))
class InventoryView:
    def __init__(self, view: ViewContext[Warehouse]) -> None:
        self.view = view

    @mcp_app_action(description="Refreshes the stock levels. Slowly.")
    def refreshHTTPStock(self) -> None:
        pass

    @mcp_app_action(description="Moves stock.", name="move")
    async def move_stock(self, params: Amount, *, ctx: Any = None) -> dict[str, int]:
        return {"qty": params.qty}

    async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> None:
        pass


def test_snake_case_splits_camel_case_and_keeps_acronyms_together() -> None:
    assert snake_case("refreshHTTPStock") == "refresh_http_stock"
    assert snake_case("refreshStock") == "refresh_stock"
    assert snake_case("getURL") == "get_url"
    assert snake_case("HTTPServer") == "http_server"
    assert snake_case("already_snake") == "already_snake"


def test_the_app_name_comes_from_the_route() -> None:
    assert app_name("/sales/inventory") == "sales_inventory"
    assert app_name("/Inventory/") == "inventory"
    assert app_name("/") == "app"


def test_a_collected_app_names_its_opening_update_and_action_tools() -> None:
    app = collect_app(InventoryView)
    assert app.name == "sales_inventory"
    assert app.update_tool == "sales_inventory_update"
    assert [a.tool for a in app.actions] == [
        "sales_inventory_refresh_http_stock",
        "sales_inventory_move",
        "sales_inventory_count",
    ]
    move = app.actions[1]
    assert (move.params, move.takes_ctx, move.on_view) == (Amount, True, True)
    count = app.actions[2]
    assert (count.params, count.output_model, count.on_view) == (Amount, Stock, False)
    assert app.has_observer and app.init_takes_view


def test_an_actions_class_method_is_bound_with_the_view_first() -> None:
    app = collect_app(InventoryView)
    view = object()
    assert app.bound_action(app.actions[2], view)(Amount(qty=3)) == Stock(sku="A", qty=3)


def test_the_update_event_validates_its_arguments_as_a_model() -> None:
    event = McpAppUpdateEvent(tool="inventory_update", arguments={"code": "W9"}, fields_set=frozenset({"code"}))
    assert event.arguments_as(Warehouse) == Warehouse(code="W9")


def _raises(cls: type, *fragments: str) -> None:
    with pytest.raises(AppDefinitionError) as info:
        collect_app(cls)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_blank_app_description_is_refused_naming_the_class() -> None:
    @mcp_app(description="  ", route="/x")
    class Blank:
        pass

    _raises(Blank, "@mcp_app on Blank", "description is blank", "Fix:")


def test_a_blank_action_description_is_refused_naming_class_and_method() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        @mcp_app_action(description="")
        def poke(self) -> None:
            pass

    _raises(View, "View.poke", "description is blank", "Fix:")


def test_an_action_with_a_bad_signature_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        @mcp_app_action(description="Pokes.")
        def poke(self, a: Amount, b: Amount) -> None:
            pass

    _raises(View, "View.poke", "bad signature", "(self) or (self, params: Model)")


def test_an_actions_class_method_without_the_view_parameter_is_refused() -> None:
    class Actions:
        @mcp_app_action(description="Pokes.")
        def poke(self) -> None:
            pass

    @mcp_app(description="Shows x.", route="/x", actions=(Actions,))
    class View:
        pass

    _raises(View, "Actions.poke", "bad signature", "(self, view)")


def test_a_params_model_with_a_non_object_schema_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        @mcp_app_action(description="Pokes.")
        def poke(self, params: Codes) -> None:
            pass

    _raises(View, "View.poke", "'array'", "not 'object'", "Fix:")


def test_a_non_object_input_schema_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x", input=Codes)
    class View:
        pass

    _raises(View, "@mcp_app on View: input", "not 'object'")


def test_an_unannotated_params_parameter_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        @mcp_app_action(description="Pokes.")
        def poke(self, params) -> None:  # type: ignore[no-untyped-def]  # pyright: ignore[reportMissingParameterType]
            pass

    _raises(View, "View.poke", "pydantic model class")


def test_a_tool_name_that_breaks_the_pattern_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        @mcp_app_action(description="Pokes.", name="Poke-It")
        def poke(self) -> None:
            pass

    _raises(View, "View.poke", "'x_Poke-It'", "^[a-z0-9_]{1,64}$", "name=")

    @mcp_app(description="Shows x.", route="/my-view")
    class Dashed:
        pass

    _raises(Dashed, "@mcp_app on Dashed", "'my-view'", "set name=")


def test_two_claimants_of_one_tool_name_are_both_named() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        @mcp_app_action(description="Pokes.", name="update")
        def poke(self) -> None:
            pass

        async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> None:
            pass

    _raises(View, "'x_update' is claimed twice", "View.on_mcp_app_update", "View.poke")


def test_an_app_tool_clashing_with_a_plain_tool_names_both() -> None:
    with pytest.raises(AppDefinitionError, match="claimed twice: by the plain tool 'x' and by the opening tool"):
        check_claims([("x", "the plain tool 'x'"), ("x", "the opening tool of app class View")])


def test_a_view_constructor_with_two_required_parameters_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        def __init__(self, a: int, b: int) -> None:
            pass

    _raises(View, "View", "__init__", "ViewContext")


def test_an_observer_with_a_bad_signature_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x")
    class View:
        async def on_mcp_app_update(self) -> None:
            pass

    _raises(View, "View.on_mcp_app_update", "(self, event)")


def test_an_actions_class_that_needs_arguments_is_refused_unless_given_as_an_instance() -> None:
    class Actions:
        def __init__(self, store: object) -> None:
            self.store = store

        @mcp_app_action(description="Pokes.")
        def poke(self, view: object) -> None:
            pass

    @mcp_app(description="Shows x.", route="/x", actions=(Actions,))
    class View:
        pass

    _raises(View, "actions class Actions cannot be built", "list an instance")

    @mcp_app(description="Shows x.", route="/x", actions=(Actions(store=object()),))
    class Fine:
        pass

    assert [a.tool for a in collect_app(Fine).actions] == ["x_poke"]


def test_an_undecorated_class_is_refused() -> None:
    class Plain:
        pass

    _raises(Plain, "Plain is not an MCP app", "@mcp_app")


def test_an_update_tool_name_longer_than_the_pattern_allows_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x", name="a" * 60)
    class View:
        async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> None:
            pass

    _raises(View, "View.on_mcp_app_update", "_update'", "shorten the app name")


def test_an_input_check_that_is_not_a_classmethod_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x", input=Warehouse)
    class View:
        def check_mcp_app_input(self, params: Warehouse) -> None:
            pass

    _raises(View, "View.check_mcp_app_input must be a classmethod", "Fix:", "(cls, params, *, ctx=None)")


def test_an_input_check_with_a_bad_signature_is_refused() -> None:
    @mcp_app(description="Shows x.", route="/x", input=Warehouse)
    class NoParams:
        @classmethod
        def check_mcp_app_input(cls) -> None:
            pass

    _raises(NoParams, "NoParams.check_mcp_app_input: bad signature (cls)", "Fix:", "(cls, params, *, ctx=None)")

    @mcp_app(description="Shows x.", route="/x", input=Warehouse)
    class Extra:
        @classmethod
        def check_mcp_app_input(cls, params: Warehouse, *, strict: bool = True) -> None:
            pass

    _raises(Extra, "Extra.check_mcp_app_input", "unexpected parameter 'strict'", "keyword parameter 'ctx'")


async def test_an_input_check_is_called_with_the_input_and_ctx_sync_or_async() -> None:
    refusal = tool_error("NOT_FOUND", message="No warehouse W0.")

    @mcp_app(description="Shows x.", route="/x", input=Warehouse)
    class Sync:
        @classmethod
        def check_mcp_app_input(cls, params: Warehouse) -> BuiltResult | None:
            return refusal if params.code == "W0" and cls is Sync else None

    @mcp_app(description="Shows x.", route="/x", input=Warehouse)
    class Async:
        @classmethod
        async def check_mcp_app_input(cls, params: Warehouse, *, ctx: Any = None) -> BuiltResult | None:
            return refusal if ctx == "the call" else None

    sync, async_ = collect_app(Sync), collect_app(Async)
    assert await sync.check_input(Warehouse(code="W0"), "the call") is refusal
    assert await sync.check_input(Warehouse(), "the call") is None
    assert await async_.check_input(Warehouse(), "the call") is refusal
    assert await async_.check_input(Warehouse(), None) is None
    assert await collect_app(InventoryView).check_input(Warehouse(code="W0"), None) is None  # no check: go on


class _Topic(BaseModel):
    topic: str = Field(description="What to write about")


@mcp_app(description="Shows notes.", route="/notes")
class _NotesWithPrompts:
    @mcp_app_prompt(description="Summarise the notes on a topic", arguments=_Topic, complete={"topic": "topics"})
    @classmethod
    def summarise(cls, arguments: _Topic) -> str:
        return f"Summarise the notes on {arguments.topic}."

    @classmethod
    def topics(cls, value: str, context: Mapping[str, str]) -> list[str]:
        return [topic for topic in ("cats", "cars") if topic.startswith(value)]


async def test_an_apps_prompts_are_named_after_it_and_complete_through_its_classmethods() -> None:
    (prompt,) = app_prompts("notes", _NotesWithPrompts)
    assert prompt.name == "notes_summarise" and prompt.to_mcp().arguments
    rendered = await prompt.get({"topic": "cats"}, None)
    assert rendered.messages[0].content == mcp_types.TextContent(type="text", text="Summarise the notes on cats.")
    assert (await complete_with(prompt.completers["topic"], "ca", {})).values == ["cats", "cars"]


def test_a_prompt_that_is_not_a_classmethod_is_refused_with_the_fix() -> None:
    class Notes:
        @mcp_app_prompt(description="Summarise")
        def summarise(self) -> str:
            return ""

    with pytest.raises(AppDefinitionError, match="make it a @classmethod"):
        app_prompts("notes", Notes)
