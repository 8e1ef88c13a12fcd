"""Test helpers: read what a built response carried, without parsing its text back."""

from __future__ import annotations

from typing import Any

import mcp_types

from webapp.responses.builder import SideDoor, side_door

__all__ = ["meta", "texts"]


def meta(result: mcp_types.CallToolResult | Any) -> SideDoor | None:
    """The side door of a result built by `ResponseBuilder.build()`: `data`, `system_rules`, `ui_blocks`."""
    return side_door(result) if isinstance(result, mcp_types.CallToolResult) else None


def texts(result: mcp_types.CallToolResult) -> list[str]:
    """The text of every text block of a result, in order."""
    return [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
