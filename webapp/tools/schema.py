"""Input schemas of tools: a model's object schema, the flat union of actions, reserved properties, `_select`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel

__all__ = ["SELECT_DESCRIPTION", "SELECT_PROPERTY", "action_union", "model_object_schema", "with_extra_properties"]

SELECT_PROPERTY: Final = "_select"
SELECT_DESCRIPTION: Final = (
    "⚡ Context optimization: select only the response fields you need. Omit to receive all fields."
)
_NOT_KEPT: Final = ("title", "description", "$defs")
_UNION_KEYWORDS: Final = frozenset({"type", "properties", "required", "additionalProperties", "$defs"})


def model_object_schema(model: type[BaseModel] | None, owner: str) -> dict[str, Any]:
    """`{type: object, properties, required?, additionalProperties: false, …, $defs?}` of an input model.

    Every keyword of the model's JSON schema is kept as written (`json_schema_extra`: `$schema`, `allOf`,
    `if`/`then`/`else`…), except the `title` and `description` pydantic takes from the class name and docstring: the
    tool has its own description. `additionalProperties` is always false: unknown properties are always refused."""
    if model is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    schema = model.model_json_schema()
    defs: dict[str, Any] = dict(schema.get("$defs", {}))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):  # a self-referencing model is itself a definition
        schema = defs.get(ref.removeprefix("#/$defs/"), schema)
    if schema.get("type") != "object" or not isinstance(schema.get("properties", {}), dict):
        raise ValueError(
            f"{owner}: the input model {model.__name__} must have an object JSON schema with properties; "
            f"its schema type is {schema.get('type')!r}. Use a pydantic model with fields."
        )
    result: dict[str, Any] = {"type": "object", "properties": dict(schema.get("properties", {}))}
    if schema.get("required"):
        result["required"] = list(schema["required"])
    result["additionalProperties"] = False
    result.update({key: value for key, value in schema.items() if key not in result and key not in _NOT_KEPT})
    if defs:
        result["$defs"] = defs
    return result


def _merge(
    target: dict[str, Any], owners: dict[str, str], items: Mapping[str, Any], action: str, tool: str, what: str
) -> None:
    for key, definition in items.items():
        if key in target and target[key] != definition:
            raise ValueError(
                f"Tool {tool!r}: actions {owners[key]!r} and {action!r} define the {what} {key!r} differently "
                f"({target[key]!r} vs {definition!r}). Use one definition, or rename one of them."
            )
        target.setdefault(key, definition)
        owners.setdefault(key, action)


def action_union(tool: str, actions: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One flat object: `action` (enum of the names) first, then the union of the actions' properties."""
    properties: dict[str, Any] = {"action": {"type": "string", "enum": [name for name, _ in actions]}}
    defs: dict[str, Any] = {}
    owners: dict[str, str] = {"action": "(discriminator)"}
    def_owners: dict[str, str] = {}
    for name, schema in actions:
        if extra := sorted(set(schema) - _UNION_KEYWORDS):
            raise ValueError(
                f"Tool {tool!r}: the input model of action {name!r} has the schema keywords {extra}, which the one "
                "flat schema of all the actions cannot keep. Give that action a tool of its own (handler=)."
            )
        if "action" in schema["properties"]:
            raise ValueError(
                f"Tool {tool!r}: action {name!r} has an input property 'action', which is the discriminator. "
                "Rename that field."
            )
        _merge(properties, owners, schema["properties"], name, tool, "property")
        _merge(defs, def_owners, schema.get("$defs", {}), name, tool, "schema definition")
    result: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": ["action"],
        "additionalProperties": False,
    }
    if defs:
        result["$defs"] = defs
    return result


def with_extra_properties(
    schema: dict[str, Any], reserved: Mapping[str, Mapping[str, Any]], select_keys: Iterable[str], tool: str
) -> dict[str, Any]:
    """Append the reserved properties, then `_select` (only when there are keys); never required."""
    properties: dict[str, Any] = dict(schema["properties"])
    for name, definition in reserved.items():
        if name in properties:
            raise ValueError(
                f"Tool {tool!r}: the reserved property {name!r} clashes with an input property of the same name. "
                "Rename the field."
            )
        properties[name] = dict(definition)
    keys = sorted(set(select_keys))
    if keys:
        if SELECT_PROPERTY in properties:
            raise ValueError(f"Tool {tool!r}: the property {SELECT_PROPERTY!r} is reserved for the field selection.")
        properties[SELECT_PROPERTY] = {
            "type": "array",
            "description": SELECT_DESCRIPTION,
            "items": {"type": "string", "enum": keys},
        }
    return {**schema, "properties": properties}
