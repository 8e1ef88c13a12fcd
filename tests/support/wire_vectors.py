"""Loading the wire-format vectors and comparing a result with a case's expectation."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import mcp_types
import orjson

from webapp.testing import meta

COPY = Path(__file__).parents[1] / "data" / "wire-vectors.json"
SPEC = Path(__file__).parents[3] / "shared" / "spec" / "wire-vectors.json"

_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _floats(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$float"}:
            return _FLOATS[value["$float"]]
        return {key: _floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_floats(item) for item in value]
    return value


def cases(*kinds: str) -> list[Any]:
    loaded = json.loads(COPY.read_text(encoding="utf-8"))
    return [_floats(case) for case in loaded["cases"] if case["input"]["kind"] in kinds]


def case_id(case: Any) -> str:
    return str(case["id"])


def _as_json(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value))


def _meta_json(result: mcp_types.CallToolResult) -> Any:
    door = meta(result)
    if door is None:
        return None
    blocks = [dataclasses.asdict(block) for block in door.ui_blocks]
    return _as_json({"data": door.data, "system_rules": door.system_rules, "ui_blocks": blocks})


def assert_result(result: mcp_types.CallToolResult, expect: dict[str, Any]) -> None:
    texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
    assert texts == expect["content"]
    assert len(result.content) == len(texts)
    assert bool(result.is_error) == bool(expect["isError"])
    assert result.structured_content == expect["structuredContent"]
    assert _meta_json(result) == expect["meta"]
    wire = result.model_dump_json(by_alias=True)
    assert "system_rules" not in wire and "ui_blocks" not in wire
