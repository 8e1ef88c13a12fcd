"""Tool argument validation: pydantic errors become the `<validation_error>` field lines of wire-format §5."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import AliasChoices, AliasPath, BaseModel, ValidationError
from pydantic_core import ErrorDetails

from webapp.wire import js_number, js_scalar

__all__ = [
    "DEFAULT_LIMITS",
    "MISSING",
    "ArgumentLimits",
    "ArgumentValidator",
    "InvalidArguments",
    "limit_problems",
    "reserved_problems",
    "sent_text",
]

MISSING: Final = object()
"""Marks a field the caller did not send."""

_TYPE_NAMES: Final = {
    "string": ("string_type", "string_unicode", "bytes_type", "date_type", "time_type", "datetime_type", "uuid_type"),
    "integer": ("int_type", "int_parsing", "int_from_float", "int_parsing_size"),
    "number": ("float_type", "float_parsing", "decimal_type", "decimal_parsing"),
    "boolean": ("bool_type", "bool_parsing"),
    "array": ("list_type", "tuple_type", "set_type", "frozen_set_type", "iterable_type"),
    "object": ("dict_type", "model_type", "model_attributes_type", "dataclass_type", "mapping_type"),
    "null": ("none_required",),
}
_EXPECTED_TYPE: Final = {error: name for name, errors in _TYPE_NAMES.items() for error in errors}
_BOUNDS: Final = (("greater_than_equal", "ge", ">="), ("greater_than", "gt", ">"))
_BOUNDS_UPPER: Final = (("less_than_equal", "le", "<="), ("less_than", "lt", "<"))
_EXTRA_MESSAGE: Final = "Extra inputs are not permitted"
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**63 - 1
_MAX_PROBLEMS: Final = 10


@dataclass(frozen=True, slots=True)
class ArgumentLimits:
    """Bounds every tool argument keeps whatever its schema says: longer strings, longer arrays or objects, deeper
    nesting and integers outside the signed 64-bit range are refused before any handler or storage sees them."""

    max_string: int = 65_536
    max_items: int = 10_000
    max_depth: int = 32


DEFAULT_LIMITS: Final = ArgumentLimits()


class InvalidArguments(Exception):
    """The arguments do not fit the input model; `fields` are the `(path, text)` lines of the envelope."""

    def __init__(self, fields: list[tuple[str, str]]) -> None:
        super().__init__(f"{len(fields)} invalid argument(s)")
        self.fields = fields


def sent_text(value: Any) -> str:
    """How "You sent: …" shows a value: quoted strings (cut at 50), JSON scalars, `array(n)`, `object`."""
    if value is MISSING:
        return "(missing)"
    if isinstance(value, str):
        return f"'{value[:47]}...'" if len(value) > 50 else f"'{value}'"
    if isinstance(value, bool | int | float):
        return js_number(value)
    if value is None:
        return "null"
    if isinstance(value, list | tuple | set | frozenset):
        return f"array({len(value)})"  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, Mapping | BaseModel):
        return "object"
    return str(value)


def _bound(value: Any) -> str:
    return js_number(value) if isinstance(value, int | float) else str(value)


class _SchemaWalk:
    """Follows an error location through the JSON schema: drops union tags, finds enum options."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self._root = schema
        self._defs: Mapping[str, Any] = schema.get("$defs", {})

    def _expand(self, nodes: Iterable[Any]) -> list[Mapping[str, Any]]:
        out: list[Mapping[str, Any]] = []
        pending = [node for node in nodes if isinstance(node, Mapping)]
        budget = 64  # a pure `$ref` cycle cannot loop forever
        while pending and budget:
            budget -= 1
            node = pending.pop(0)
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                pending.insert(0, self._defs.get(ref.removeprefix("#/$defs/"), {}))
                continue
            branches = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
            if isinstance(branches, list):
                pending[0:0] = [branch for branch in branches if isinstance(branch, Mapping)]
                continue
            out.append(node)
        return out

    def locate(self, loc: Iterable[int | str]) -> tuple[str, list[Mapping[str, Any]]]:
        """The dotted path of `loc` without pydantic's union tags, and the schema nodes found there."""
        nodes = self._expand([self._root])
        parts: list[str] = []
        for segment in loc:
            union = sum(1 for node in nodes if node.get("type") != "null") > 1
            found: list[Any] = []
            for node in nodes:
                if isinstance(segment, int):
                    found.append(node.get("items"))
                    continue
                properties = node.get("properties", {})
                if segment in properties:
                    found.append(properties[segment])
                elif isinstance(node.get("additionalProperties"), Mapping):
                    found.append(node["additionalProperties"])
            found = [item for item in found if isinstance(item, Mapping)]
            if not found and union and isinstance(segment, str):
                continue  # pydantic names the union member it tried: not part of the caller's path
            parts.append(str(segment))
            nodes = self._expand(found)
        return ".".join(parts) or "(root)", nodes


def _options(nodes: list[Mapping[str, Any]]) -> list[Any] | None:
    values: list[Any] = []
    for node in nodes:
        if isinstance(node.get("enum"), list):
            values.extend(node["enum"])
        elif "const" in node:
            values.append(node["const"])
    return values or None


def _hint(error: ErrorDetails, nodes: list[Mapping[str, Any]]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "Provide this field."
    if kind in _EXPECTED_TYPE:
        return f"Expected type: {_EXPECTED_TYPE[kind]}."
    if kind in ("enum", "literal_error"):
        options = _options(nodes)
        if options is not None:
            return "Valid options: " + ", ".join(f"'{js_scalar(option)}'" for option in options) + "."
        return f"Valid options: {ctx['expected']}." if "expected" in ctx else ""
    for error_type, key, sign in (*_BOUNDS, *_BOUNDS_UPPER):
        if kind == error_type and key in ctx:
            return f"Must be {sign} {_bound(ctx[key])}."
    return ""


def _line(message: str, value: Any, hint: str) -> str:
    text = f"{message} You sent: {sent_text(value)}."
    return f"{text} {hint}" if hint else text


def _limit_problem(value: Any, depth: int, limits: ArgumentLimits) -> str | None:
    """Why `value` itself breaks `limits` (its items are checked separately), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and not _INT_MIN <= value <= _INT_MAX:
        return (
            f"Integer is outside the 64-bit range. You sent: a {value.bit_length()}-bit integer. "
            f"Must be >= {_INT_MIN} and <= {_INT_MAX}."
        )
    if isinstance(value, str) and len(value) > limits.max_string:
        return _line(f"String has {len(value)} characters; the limit is {limits.max_string}.", value, "")
    if isinstance(value, Mapping | list | tuple):
        if depth >= limits.max_depth:
            return _line(f"Value is nested deeper than {limits.max_depth} levels.", value, "Send a flatter value.")
        if len(value) > limits.max_items:  # pyright: ignore[reportUnknownArgumentType]
            return _line(f"Value has {len(value)} items; the limit is {limits.max_items}.", value, "")  # pyright: ignore
    return None


def limit_problems(arguments: Mapping[str, Any], limits: ArgumentLimits = DEFAULT_LIMITS) -> list[tuple[str, str]]:
    """The `(path, text)` lines of the values in `arguments` that break `limits` (at most 10), else `[]`."""
    problems: list[tuple[str, str]] = []
    pending: list[tuple[str, Any, int]] = [("", dict(arguments), 0)]
    while pending and len(problems) < _MAX_PROBLEMS:
        path, value, depth = pending.pop()
        problem = _limit_problem(value, depth, limits)
        if problem is not None:
            problems.append((path or "(root)", problem))
            continue
        if isinstance(value, Mapping):
            for key, item in reversed(list(value.items())):  # pyright: ignore[reportUnknownVariableType]
                name = str(key)  # pyright: ignore[reportUnknownArgumentType]
                if len(name) > limits.max_string:
                    problems.append((path or "(root)", _line("A property name is too long.", name, "")))
                    break
                pending.append((f"{path}.{name}" if path else name, item, depth + 1))
        elif isinstance(value, list | tuple):
            pending.extend((f"{path}.{index}", item, depth + 1) for index, item in reversed(list(enumerate(value))))  # pyright: ignore
    return problems


def reserved_problems(values: Mapping[str, Any], schemas: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Checks reserved string properties (such as `_view`) against their `type: string`, `minLength`, `maxLength`."""
    problems: list[tuple[str, str]] = []
    for name, value in values.items():
        schema = schemas.get(name, {})
        if schema.get("type") != "string":
            continue
        if not isinstance(value, str):
            problems.append((name, _line("Input should be a valid string.", value, "Expected type: string.")))
            continue
        least, limit = schema.get("minLength"), schema.get("maxLength")
        if isinstance(least, int) and len(value) < least:
            problems.append((name, _line(f"String should have at least {least} characters.", value, "")))
        elif isinstance(limit, int) and len(value) > limit:
            problems.append((name, _line(f"String should have at most {limit} characters.", value, "")))
    return problems


def _unknown_hint(name: str) -> str:
    return f"Remove or correct unrecognized fields: '{name}'. Check for typos."


def _accepted_keys(model: type[BaseModel]) -> frozenset[str]:
    by_name = bool(model.model_config.get("validate_by_name") or model.model_config.get("populate_by_name"))
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        alias = field.validation_alias if field.validation_alias is not None else field.alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias]
        for choice in choices:
            if isinstance(choice, AliasPath):
                choice = choice.path[0]
            if isinstance(choice, str):
                keys.add(choice)
        if alias is None or by_name:
            keys.add(name)
    return frozenset(keys)


class ArgumentValidator:
    """Validates one action's arguments against its input model; unknown properties are always rejected."""

    def __init__(self, model: type[BaseModel] | None, schema: Mapping[str, Any]) -> None:
        self.model = model
        self._walk = _SchemaWalk(schema)
        forbids = model is not None and model.model_config.get("extra") == "forbid"
        self._accepted: frozenset[str] | None = None if forbids else (_accepted_keys(model) if model else frozenset())

    def _field(self, error: ErrorDetails) -> tuple[str, str]:
        path, nodes = self._walk.locate(error["loc"])
        if error["type"] == "extra_forbidden":
            return path, _line(error["msg"], error["input"], _unknown_hint(str(error["loc"][-1])))
        value = MISSING if error["type"] == "missing" else error["input"]
        return path, _line(error["msg"], value, _hint(error, nodes))

    def validate(self, arguments: Mapping[str, Any]) -> BaseModel | None:
        """The validated model (None without a model), or `InvalidArguments` with one line per problem."""
        fields: list[tuple[str, str]] = []
        params: BaseModel | None = None
        if self.model is not None:
            try:
                params = self.model.model_validate(dict(arguments))
            except ValidationError as exc:
                fields.extend(self._field(error) for error in exc.errors())
        if self._accepted is not None:
            fields.extend(
                (key, _line(_EXTRA_MESSAGE, value, _unknown_hint(key)))
                for key, value in arguments.items()
                if key not in self._accepted
            )
        if fields:
            raise InvalidArguments(fields)
        return params
