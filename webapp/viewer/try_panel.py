"""The viewer's "try a tool" form: fields generated from a tool's input schema, the call made by the viewer.

The viewer calls the server's own MCP endpoint with the official client (`call_over_mcp`), or, for a person signed
in at the issuer, the server's call path in process; either way the call is recorded like any other.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx2
import mcp_types
import orjson
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from nicegui import ui

from webapp.tools.registry import ToolLike
from webapp.viewer.result_view import ResultView

__all__ = [
    "FieldSpec",
    "FormError",
    "TryPanel",
    "ViewChoice",
    "call_over_mcp",
    "collect_arguments",
    "schema_fields",
]

Kind = Literal["string", "number", "integer", "boolean", "enum", "multi", "json", "view"]
_MISSING: Any = object()
VIEW_ARGUMENT = "_view"


class FormError(ValueError):
    """A form field holds a value that cannot be sent; `field` names it."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True)
class FieldSpec:
    """One input of the form, derived from one property of the input schema."""

    name: str
    kind: Kind
    required: bool
    description: str = ""
    default: Any = field(default=_MISSING, compare=False)
    options: tuple[Any, ...] = ()

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING


@dataclass(frozen=True)
class ViewChoice:
    """An open view the `_view` field can name: the handle stays on the server, the label is masked."""

    handle: str
    label: str


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        if isinstance(target, Mapping):
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            return _resolve(merged, root)
    return schema


def _non_null(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema without its `null` alternative; None when several alternatives remain."""
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            rest = [_resolve(v, root) for v in variants if isinstance(v, Mapping) and v.get("type") != "null"]
            if len(rest) != 1:
                return None
            return {**{k: v for k, v in schema.items() if k != key}, **rest[0]}
    types = schema.get("type")
    if isinstance(types, list):
        rest = [t for t in types if t != "null"]
        return {**schema, "type": rest[0]} if len(rest) == 1 else None
    return schema


def _kind(name: str, schema: Mapping[str, Any] | None, root: Mapping[str, Any]) -> tuple[Kind, tuple[Any, ...]]:
    if name == VIEW_ARGUMENT:
        return "view", ()
    if schema is None:
        return "json", ()
    if isinstance(enum := schema.get("enum"), list):
        return "enum", tuple(enum)
    if "const" in schema:
        return "enum", (schema["const"],)
    kind = schema.get("type")
    if kind == "array":
        items = _non_null(schema.get("items", {}), root)
        if items is not None and isinstance(choices := items.get("enum"), list):
            return "multi", tuple(choices)
        return "json", ()
    if kind in ("string", "number", "integer", "boolean"):
        return kind, ()
    return "json", ()


def schema_fields(schema: Mapping[str, Any]) -> list[FieldSpec]:
    """The form fields of an object input schema, in property order (`_view` last)."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required = set(schema.get("required") or ())
    fields: list[FieldSpec] = []
    for name, raw in properties.items():
        prop = _resolve(raw if isinstance(raw, Mapping) else {}, schema)
        kind, options = _kind(str(name), _non_null(prop, schema), schema)
        fields.append(
            FieldSpec(
                name=str(name),
                kind=kind,
                required=name in required,
                description=str(prop.get("description") or ""),
                default=prop.get("default", _MISSING),
                options=options,
            )
        )
    return sorted(fields, key=lambda spec: spec.kind == "view")


def collect_arguments(fields: Sequence[FieldSpec], values: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments from raw form values; empty optional fields are left out. Raises FormError."""
    arguments: dict[str, Any] = {}
    for spec in fields:
        value = values.get(spec.name)
        if value is None or (isinstance(value, str) and value == "" and spec.kind != "string"):
            if spec.required:
                raise FormError(spec.name, "this field is required")
            continue
        if spec.kind == "string" and value == "" and not spec.required:
            continue
        arguments[spec.name] = _convert(spec, value)
    return arguments


def _convert(spec: FieldSpec, value: Any) -> Any:
    if spec.kind == "integer":
        number = float(value)
        if not math.isfinite(number) or not number.is_integer():
            raise FormError(spec.name, f"expected a whole number, got {value!r}")
        return int(number)
    if spec.kind == "number":
        number = float(value)
        return int(number) if number.is_integer() and math.isfinite(number) else number
    if spec.kind == "json":
        try:
            return orjson.loads(str(value))
        except orjson.JSONDecodeError as error:
            raise FormError(spec.name, f"not valid JSON ({error})") from None
    if spec.kind == "multi":
        return list(value)
    return value


async def call_over_mcp(
    url: str, tool: str, arguments: dict[str, Any], *, token: str | None = None, timeout: float = 60.0
) -> mcp_types.CallToolResult:
    """Call `tool` on the MCP endpoint at `url` with the official client (as a bearer of `token`, if given)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    limits = httpx2.Timeout(timeout, read=timeout)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=limits) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await client.call_tool(tool, arguments)


Caller = Callable[[str, dict[str, Any]], Awaitable[mcp_types.CallToolResult]]


class TryPanel:
    """A dialog: pick a tool, fill its form, call it, see the rendered result."""

    def __init__(
        self,
        tools: Sequence[ToolLike],
        call: Caller,
        *,
        views: Callable[[], Sequence[ViewChoice]] = lambda: (),
        focus_view: str | None = None,
    ) -> None:
        self._tools = {tool.name: tool for tool in sorted(tools, key=lambda t: t.name)}
        self._call = call
        self._views = views
        self.focus_view = focus_view
        self._fields: list[FieldSpec] = []
        self._inputs: dict[str, Any] = {}
        self._view_handles: dict[int, str] = {}
        with ui.dialog().props("position=right full-height") as self.dialog, ui.card().classes("wv-try"):
            with ui.row().classes("w-full items-center no-wrap"):
                ui.label("Try a tool").classes("wv-try-title")
                ui.space()
                ui.button(icon="close", on_click=self.dialog.close).props("flat round dense")
            self.tool = ui.select(
                list(self._tools), label="Tool", with_input=True, on_change=lambda _e: self._build_form()
            )
            self.tool.classes("w-full wv-try-tool").props("outlined dense autofocus")
            self.description = ui.label("").classes("wv-try-description")
            self.form = ui.column().classes("w-full gap-2")
            self.call_button = ui.button("Call", icon="play_arrow", on_click=self._submit).classes("wv-try-call")
            self.status = ui.label("").classes("wv-try-status")
            self.result = ui.column().classes("w-full wv-try-result")

    def open(self, tool: str | None = None) -> None:
        """Show the dialog, with `tool` chosen if given (else the last choice); the form is built afresh."""
        if tool in self._tools and self.tool.value != tool:
            self.tool.value = tool  # rebuilds the form
        else:
            self._build_form()
        self.dialog.open()

    def _build_form(self) -> None:
        self.form.clear()
        self._inputs.clear()
        spec = self._tools.get(self.tool.value or "")
        self.description.text = spec.description if spec else ""
        self._fields = schema_fields(spec.input_schema) if spec else []
        with self.form:
            for field_spec in self._fields:
                self._inputs[field_spec.name] = self._input(field_spec)

    def _input(self, spec: FieldSpec) -> Any:
        label = spec.name + (" *" if spec.required else "")
        default = spec.default if spec.has_default else None
        element: Any
        if spec.kind == "view":
            return self._view_input(label)
        if spec.kind in ("enum", "multi"):
            multiple = spec.kind == "multi"
            element = ui.select(list(spec.options), label=label, multiple=multiple, clearable=not spec.required)
            if default is not None and (multiple or default in spec.options):
                element.value = default
        elif spec.kind == "boolean":
            if spec.required:
                element = ui.switch(label, value=bool(default))
            else:
                element = ui.select({True: "true", False: "false"}, label=label, clearable=True, value=default)
        elif spec.kind in ("number", "integer"):
            element = ui.number(label, value=default, step=1 if spec.kind == "integer" else None)
        elif spec.kind == "json":
            text = "" if default is None else orjson.dumps(default).decode()
            element = ui.textarea(label, value=text, placeholder="JSON").props("autogrow")
        else:
            element = ui.input(label, value="" if default is None else str(default))
        element.classes("w-full")
        element.props["data-field"] = spec.name
        if spec.description and spec.kind != "boolean":
            element.props["hint"] = spec.description
        return element

    def _view_input(self, label: str) -> Any:
        choices = list(self._views())
        self._view_handles = {index: choice.handle for index, choice in enumerate(choices)}
        focus = next(
            (i for i, c in enumerate(choices) if self.focus_view and c.handle.startswith(self.focus_view)), None
        )
        options = {index: choice.label for index, choice in enumerate(choices)}
        element = ui.select(options, label=label, clearable=True, value=focus).classes("w-full")
        element.props["data-field"] = VIEW_ARGUMENT
        element.props["hint"] = "The open view to act on"
        return element

    def _values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for spec in self._fields:
            value = self._inputs[spec.name].value
            values[spec.name] = self._view_handles.get(value) if spec.kind == "view" else value
        return values

    async def _submit(self) -> None:
        name = self.tool.value
        if not name:
            self.status.text = "Pick a tool first."
            return
        try:
            arguments = collect_arguments(self._fields, self._values())
        except FormError as error:
            self.status.text = str(error)
            return
        self.call_button.props("loading")
        self.status.text = f"Calling {name}…"
        try:
            result = await self._call(name, arguments)
        except Exception as error:
            self.status.text = f"The call failed: {error}"
            return
        finally:
            self.call_button.props(remove="loading")
        texts = [b.text if isinstance(b, mcp_types.TextContent) else f"[{b.type} block]" for b in result.content]
        self.status.text = "Error result" if result.is_error else "Done"
        self.result.clear()
        with self.result:
            ResultView(texts, on_suggest=self.open).classes("w-full")
