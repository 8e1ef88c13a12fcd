"""What `tools/list` shows over HTTP in both protocol eras: titles, annotations and icons as given, and input schemas
with the JSON Schema 2020-12 keywords their models wrote."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp_types
import pytest

from docs.examples.everything import CONTACT_KEYWORDS
from tests.support.e2e import RunningServer, mcp_client, run_server
from tests.support.tool_samples import STOCK_ICON

MODES = ["auto", "legacy"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    db = tmp_path_factory.mktemp("listing") / "listing.db"
    with run_server(db=db, app="tests.support.tool_samples:build") as running:
        yield running


async def _listed(server: RunningServer, mode: Any) -> dict[str, mcp_types.Tool]:
    async with mcp_client(server, mode=mode) as client:
        return {tool.name: tool for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_lists_its_title_annotations_and_icons(server: RunningServer, mode: Any) -> None:
    tool = (await _listed(server, mode))["stock_level"]
    assert tool.title == "Stock level"
    assert tool.annotations == mcp_types.ToolAnnotations(read_only_hint=True, idempotent_hint=True)
    assert tool.icons == [STOCK_ICON]


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_without_them_lists_no_title_annotations_or_icons(server: RunningServer, mode: Any) -> None:
    tool = (await _listed(server, mode))["ping"]
    assert {"title", "annotations", "icons"}.isdisjoint(tool.model_fields_set)  # the keys are absent, not null


@pytest.mark.parametrize("mode", MODES)
async def test_the_json_schema_2020_12_tool_lists_its_keywords_as_written(server: RunningServer, mode: Any) -> None:
    schema = (await _listed(server, mode))["json_schema_2020_12_tool"].input_schema
    assert {key: schema[key] for key in CONTACT_KEYWORDS} == CONTACT_KEYWORDS
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["properties"]["address"] == {"$ref": "#/$defs/address"}
    assert schema["type"] == "object" and schema["additionalProperties"] is False
