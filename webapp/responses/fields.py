"""Field-level steps of a Presenter's data block: the `_select` filter, redaction paths, the float-free check."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

__all__ = ["STAR", "Censor", "Redaction", "float_free", "parse_path", "redact", "select_keys"]

Censor = str | Callable[[Any], Any]
"""A replacement text, or a function that gets the original value and returns its replacement."""


class _Star:
    """The wildcard segment: every key of an object, every item of a list (one level)."""

    def __repr__(self) -> str:
        return "*"


STAR: Final = _Star()
Segment = str | int | _Star

_PART = re.compile(r"(?P<name>[^.\[\]]*)(?P<brackets>(?:\[(?:\*|\d+)\])*)")
_BRACKET = re.compile(r"\[(\*|\d+)\]")


def parse_path(path: str) -> tuple[Segment, ...]:
    """`a.b`, `*.x`, `items[*].x`, `items[0].x` → segments; a malformed path is a `ValueError`."""
    segments: list[Segment] = []
    for part in path.split("."):
        match = _PART.fullmatch(part)
        if match is None or not part:
            raise ValueError(
                f"Redaction path {path!r} is malformed at {part!r}: use keys joined by dots, "
                "`*` for every key, `[*]` or `[n]` for list items (e.g. 'items[*].ssn')."
            )
        name = match["name"]
        if name:
            segments.append(STAR if name == "*" else name)
        segments.extend(STAR if index == "*" else int(index) for index in _BRACKET.findall(match["brackets"]))
    return tuple(segments)


@dataclass(frozen=True)
class Redaction:
    """One redaction path with its censor."""

    path: str
    segments: tuple[Segment, ...]
    censor: Censor


def _keys(node: Any, head: Segment) -> Sequence[Any]:
    if isinstance(node, dict):
        if head is STAR:
            return list(node)
        return [head] if isinstance(head, str) and head in node else []
    if isinstance(node, list):
        size = len(node)
        if head is STAR:
            return range(size)
        index = int(head) if isinstance(head, str) and head.isdigit() else head
        return [index] if isinstance(index, int) and 0 <= index < size else []
    return []


def _censored(value: Any, censor: Censor) -> Any:
    if value is None:
        return None
    return censor if isinstance(censor, str) else censor(value)


def _redact_node(node: Any, segments: tuple[Segment, ...], censor: Censor) -> Any:
    """Copy-on-write: containers on a changed path are copied, so the caller's values stay intact."""
    head, rest = segments[0], segments[1:]
    copy: Any = None
    for key in _keys(node, head):
        old = node[key]
        new = _redact_node(old, rest, censor) if rest else _censored(old, censor)
        if new is not old:
            if copy is None:
                copy = dict(node) if isinstance(node, dict) else list(node)
            copy[key] = new
    return node if copy is None else copy


def redact(value: Any, redactions: Sequence[Redaction], *, is_list: bool) -> Any:
    """Apply every redaction to the value, or to each item when it is a list; only existing keys change."""
    if not redactions:
        return value
    items: list[Any] = list(value) if is_list else [value]
    for redaction in redactions:
        items = [_redact_node(item, redaction.segments, redaction.censor) for item in items]
    return items if is_list else items[0]


def select_keys(value: Any, keys: Collection[str], *, is_list: bool) -> Any:
    """Keep only `keys` of the object (of each item of a list), in the data's order; shallow."""
    wanted = frozenset(keys)

    def pick(item: Any) -> Any:
        if isinstance(item, dict):
            return {key: field for key, field in item.items() if key in wanted}
        return item

    if is_list:
        return [pick(item) for item in value]
    return pick(value)


# Core-schema node types whose JSON-mode dump never holds a float (their children are checked separately).
_FLOAT_FREE_TYPES: Final = frozenset(
    {
        "model", "model-fields", "model-field", "computed-field", "typed-dict", "typed-dict-field", "dataclass",
        "dataclass-args", "dataclass-field", "list", "tuple", "set", "frozenset", "dict", "str", "int", "bool",
        "none", "nullable", "default", "union", "tagged-union", "literal", "enum", "date", "datetime", "time",
        "uuid", "url", "multi-host-url", "decimal", "bytes", "definitions", "definition-ref", "function-after",
        "function-before", "chain", "lax-or-strict", "json-or-python",
    }
)  # fmt: skip
_PLAIN_VALUES: Final = (str, int, bool, type(None))  # float is not an int subclass
_TEMPORAL_CONFIG: Final = ("ser_json_timedelta", "ser_json_temporal", "ser_json_inf_nan")


def _node_float_free(node: Mapping[str, Any]) -> bool:
    kind = node["type"]
    if kind not in _FLOAT_FREE_TYPES:
        return False
    if "serialization" in node:  # a custom serializer may return anything
        return False
    if kind == "literal":
        return all(isinstance(value, _PLAIN_VALUES) for value in node.get("expected", ()))
    if kind == "enum":
        return all(isinstance(member.value, _PLAIN_VALUES) for member in node.get("members", ()))
    config = node.get("config")
    return not (isinstance(config, Mapping) and any(key in config for key in _TEMPORAL_CONFIG))


def float_free(model: type[BaseModel]) -> bool:
    """Whether a JSON-mode dump of `model` can never contain a float (decided from its core schema)."""
    pending: list[Any] = [model.__pydantic_core_schema__]
    while pending:
        node = pending.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("type"), str) and not _node_float_free(node):  # a schema node, not a field map
                return False
            pending.extend(value for key, value in node.items() if key not in ("metadata", "default", "cls"))
        elif isinstance(node, list | tuple):
            pending.extend(node)
    return True
