"""Sample models, Presenters and tools shared by the tool tests; `build` serves the tools that show what `tools/list`
carries (`--app tests.support.tool_samples:build`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

import mcp_types
from pydantic import BaseModel, ConfigDict, Field

from docs.examples.everything import Contact
from webapp import Presenter, Tool, WebApp


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


STOCK_ICON = mcp_types.Icon(src="https://webapp.example/icons/stock.svg", mime_type="image/svg+xml", sizes=["any"])


def listed_tools() -> list[Tool]:
    """A tool with a title, annotations and an icon; one without; the conformance suite's 2020-12 tool."""
    return [
        Tool(
            "stock_level",
            description="Gets an item's stock.",
            handler=get_item,
            input=ItemId,
            title="Stock level",
            annotations=mcp_types.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
            icons=[STOCK_ICON],
        ),
        Tool("ping", description="Answers pong.", handler=lambda: "pong"),
        Tool(
            "json_schema_2020_12_tool",
            description="Tool with JSON Schema 2020-12 features",
            handler=ignore,
            input=Contact,
        ),
    ]


def build(webapp: WebApp) -> None:
    for tool in listed_tools():
        webapp.add_tool(tool)
