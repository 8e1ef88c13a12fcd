"""Hypothesis strategies for tool arguments, built from a tool's JSON input schema (the subset pydantic emits:
`$ref`/`$defs`, `anyOf`/`oneOf`, `enum`, `const`, the scalar types with their bounds, arrays and objects).

`valid_arguments(schema)` draws arguments the schema accepts; `invalid_arguments(schema)` breaks one rule of them
(an unknown property, a missing required one, a wrong type, a value out of bounds, oversized data, a bad `_view`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = ["fuzz_settings", "invalid_arguments", "json_values", "schema_values", "valid_arguments", "view_ids"]

_INT_BOUND = 2**40
_TEXT_SIZE = 24
_LIST_SIZE = 4

_SLOW_IS_FINE = [
    HealthCheck.too_slow,
    HealthCheck.data_too_large,
    HealthCheck.filter_too_much,
    HealthCheck.large_base_example,
]


def fuzz_settings(examples: int) -> settings:
    """Bounded, reproducible runs (derandomized, no example database) that tolerate slow generation."""
    return settings(
        max_examples=examples, deadline=None, database=None, derandomize=True, suppress_health_check=_SLOW_IS_FINE
    )


json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=_TEXT_SIZE),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=_LIST_SIZE) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


def view_ids(handles: Sequence[str] = ()) -> st.SearchStrategy[Any]:
    """`_view` values: real handles (when given), near misses of them, random strings and non-strings."""
    noise = st.one_of(st.text(max_size=64), st.text(alphabet="-_0123456789abcdefABCDEF", min_size=22, max_size=22))
    if not handles:
        return noise
    real = st.sampled_from(list(handles))
    near = real.flatmap(lambda h: st.sampled_from([h[:-1], h + "x", h.upper(), h[::-1], " " + h]))
    return st.one_of(real, real, near, noise)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return root.get("$defs", {})[ref.removeprefix("#/$defs/")]
    return schema


def _number_bounds(schema: Mapping[str, Any]) -> tuple[Any, Any, bool, bool]:
    low, high = schema.get("minimum"), schema.get("maximum")
    exclusive_low = exclusive_high = False
    if "exclusiveMinimum" in schema:
        low, exclusive_low = schema["exclusiveMinimum"], True
    if "exclusiveMaximum" in schema:
        high, exclusive_high = schema["exclusiveMaximum"], True
    return low, high, exclusive_low, exclusive_high


def _typed(kind: str, schema: Mapping[str, Any], root: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "string":
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", low + _TEXT_SIZE))
        return st.text(min_size=low, max_size=max(low, min(high, low + _TEXT_SIZE)))
    if kind == "integer":
        low, high, exclusive_low, exclusive_high = _number_bounds(schema)
        low = -_INT_BOUND if low is None else int(low) + (1 if exclusive_low else 0)
        high = _INT_BOUND if high is None else int(high) - (1 if exclusive_high else 0)
        return st.integers(min_value=low, max_value=high)
    if kind == "number":
        low, high, exclusive_low, exclusive_high = _number_bounds(schema)
        return st.floats(
            min_value=low,
            max_value=high,
            exclude_min=exclusive_low and low is not None,
            exclude_max=exclusive_high and high is not None,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema_values(schema.get("items", {}), root)
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", low + _LIST_SIZE))
        return st.lists(items, min_size=low, max_size=max(low, min(high, low + _LIST_SIZE)))
    if kind == "object":
        return _object(schema, root)
    return json_values


def _object(
    schema: Mapping[str, Any], root: Mapping[str, Any], hints: Mapping[str, st.SearchStrategy[Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    hints = hints or {}

    def values(name: str, sub: Mapping[str, Any]) -> st.SearchStrategy[Any]:
        plain = schema_values(sub, root)
        return st.one_of(hints[name], plain) if name in hints else plain

    return st.fixed_dictionaries(
        {name: values(name, sub) for name, sub in properties.items() if name in required},
        optional={name: values(name, sub) for name, sub in properties.items() if name not in required},
    )


def schema_values(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> st.SearchStrategy[Any]:
    """Values that `schema` (a JSON schema of the pydantic kind) accepts."""
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list):
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return st.one_of([schema_values(option, root) for option in schema[key]])
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        return schema_values(schema["allOf"][0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([_typed(str(one), schema, root) for one in kind])
    if isinstance(kind, str):
        return _typed(kind, schema, root)
    return json_values


def valid_arguments(
    schema: Mapping[str, Any],
    views: st.SearchStrategy[Any] | None = None,
    hints: Mapping[str, st.SearchStrategy[Any]] | None = None,
) -> st.SearchStrategy[Any]:
    """Arguments the tool's input schema accepts; `_view` (when the tool has it) drawn from `views`, or left out;
    properties named in `hints` also draw from those strategies (e.g. known SKUs, which random text never hits)."""
    properties = dict(schema.get("properties", {}))
    has_view = properties.pop("_view", None) is not None
    base = _object({**schema, "properties": properties}, schema, hints)
    if not has_view or views is None:
        return base
    return st.tuples(base, st.one_of(st.none(), views)).map(
        lambda pair: pair[0] if pair[1] is None else {**pair[0], "_view": pair[1]}
    )


def _wrong_for(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values of another JSON type than `schema` names (any JSON value when it names none)."""
    kind = schema.get("type")
    if not isinstance(kind, str):
        return json_values
    others = {
        "string": st.one_of(st.integers(), st.booleans(), st.lists(st.text(max_size=3), max_size=3)),
        "integer": st.one_of(
            st.text(max_size=5),
            st.floats(allow_nan=False, allow_infinity=False).filter(lambda value: not value.is_integer()),
            st.integers(min_value=2**63, max_value=2**80),
        ),
        "number": st.one_of(st.text(max_size=5), st.booleans(), st.none()),
        "boolean": st.one_of(st.text(max_size=5), st.integers(min_value=2, max_value=9), st.none()),
        "array": st.one_of(st.text(max_size=5), st.integers(), st.dictionaries(st.text(max_size=3), st.none())),
        "object": st.one_of(st.text(max_size=5), st.lists(st.none(), max_size=2)),
    }
    return others.get(kind, json_values)


def _out_of_bounds(schema: Mapping[str, Any]) -> st.SearchStrategy[Any] | None:
    kind = schema.get("type")
    if kind == "string" and "maxLength" in schema:
        return st.integers(min_value=1, max_value=70_000).map(lambda extra: "x" * (int(schema["maxLength"]) + extra))
    if kind in ("integer", "number"):
        low, high, _, _ = _number_bounds(schema)
        edges: list[st.SearchStrategy[Any]] = []
        if low is not None:
            edges += [st.just(low), st.integers(max_value=math.floor(low))]
        if high is not None:
            edges += [st.just(high), st.integers(min_value=math.ceil(high))]
        return st.one_of(edges) if edges else None
    if kind == "array" and "items" in schema:
        return st.lists(st.none(), min_size=1, max_size=3)
    return None


_SIZES = st.one_of(
    st.integers(min_value=65_537, max_value=70_000).map(lambda n: "é" * n),
    st.integers(min_value=10_001, max_value=10_100).map(lambda n: list(range(n))),
    st.integers(min_value=33, max_value=60).map(lambda depth: _nested(depth)),
    st.sampled_from([2**63, -(2**63) - 1, 2**200, -(2**100)]),
)


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


@st.composite
def invalid_arguments(draw: st.DrawFn, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments that break one rule of `schema` (drawn from valid ones)."""
    arguments: dict[str, Any] = dict(draw(valid_arguments(schema)))
    properties: Mapping[str, Any] = schema.get("properties", {})
    names = sorted(properties)
    required = sorted(set(schema.get("required", ())))
    choices = ["unknown", "sizes", "view"]
    choices += ["missing"] * bool(required) + ["wrong_type", "bounds"] * bool(names) + ["select"] * ("_select" in names)
    rule = draw(st.sampled_from(choices))
    if rule == "unknown":
        arguments[draw(st.text(min_size=1, max_size=12).filter(lambda key: key not in properties))] = draw(json_values)
    elif rule == "missing":
        arguments.pop(draw(st.sampled_from(required)), None)
    elif rule == "wrong_type":
        name = draw(st.sampled_from(names))
        arguments[name] = draw(_wrong_for(_resolve(properties[name], schema)))
    elif rule == "bounds":
        name = draw(st.sampled_from(names))
        strategy = _out_of_bounds(_resolve(properties[name], schema))
        arguments[name] = draw(strategy if strategy is not None else _wrong_for(properties[name]))
    elif rule == "sizes":
        arguments[draw(st.sampled_from(names or ["bulk"]))] = draw(_SIZES)
    elif rule == "view":
        arguments["_view"] = draw(st.one_of(st.text(min_size=65, max_size=300), json_values))
    else:
        arguments["_select"] = draw(st.one_of(json_values, st.lists(st.text(max_size=10), max_size=4)))
    return arguments
