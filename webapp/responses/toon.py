"""TOON encoding (pipe-delimited) for compact results and tool descriptions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import toon_format

from webapp.responses.builder import BuiltResult, text_result
from webapp.wire import plain

__all__ = ["toon_description_text", "toon_encode", "toon_success"]

_EMPTY = ": []"


def _fix_empty_list(line: str) -> str:
    """toon-format 1.2 writes an empty list as `[]`; the wire writes `[0|]:` (`key[0|]:` under a key)."""
    if line == "[]":
        return "[0|]:"
    if line.endswith(_EMPTY):
        return line[: -len(_EMPTY)] + "[0|]:"
    return line


def toon_encode(data: Any) -> str:
    text = toon_format.encode(_dumped(data), delimiter="|")
    return "\n".join(_fix_empty_list(line) for line in text.split("\n"))


def _dumped(data: Any) -> Any:
    if isinstance(data, list | tuple):
        return [plain(item) for item in data]
    return plain(data)


def toon_success(data: Any) -> BuiltResult:
    """One block with `data` in TOON; an empty encoding is sent as `OK`."""
    return text_result([toon_encode(data) or "OK"])


def toon_description_text(description: str, actions: Iterable[Mapping[str, Any]]) -> str:
    """`{description}. Select operation via the `action` parameter.` + a TOON table of the actions.

    Each action mapping has `action`, `desc`, `required` (argument names) and optionally `destructive`.
    """
    rows: list[dict[str, Any]] = []
    for action in actions:
        row: dict[str, Any] = {
            "action": action["action"],
            "desc": action["desc"],
            "required": ",".join(action.get("required", ())),
        }
        if action.get("destructive"):
            row["destructive"] = True
        rows.append(row)
    return f"{description}. Select operation via the `action` parameter.\n\n{toon_encode(rows)}"
