"""A finished call's outcome as one short word, for its log line and the metrics: `ok` (not an error), the code of
the error envelope it answered (wire-format §5: `VIEW_CLOSED`, `INTERNAL_ERROR`, …), `VALIDATION_ERROR`, `cancelled`
(its caller gave up) or `error` (an error without a code). Codes are upper case, the other words lower case."""

from __future__ import annotations

import re

import mcp_types

__all__ = ["CANCELLED_TEXT", "cancelled_result", "outcome_code"]

CANCELLED_TEXT = "The call was cancelled by the caller."
_CODE = re.compile(r'<tool_error code="([A-Za-z0-9_.:-]{1,64})"')


def cancelled_result() -> mcp_types.CallToolResult:
    """What the call log records for a call its caller cancelled (the caller itself gets no result)."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=CANCELLED_TEXT)], is_error=True)


def outcome_code(result: mcp_types.CallToolResult) -> str:
    """The outcome of `result` (a warning envelope is no error: `ok`)."""
    if not result.is_error:
        return "ok"
    first = next((block.text for block in result.content if isinstance(block, mcp_types.TextContent)), "")
    if first.startswith("<validation_error"):
        return "VALIDATION_ERROR"
    if match := _CODE.match(first):
        return match.group(1)
    return "cancelled" if first == CANCELLED_TEXT else "error"
