"""Tools: plain tools and tools with actions, their schemas, the call pipeline and implicit result wrapping."""

from __future__ import annotations

import copy
import dataclasses
import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol, cast

import mcp_types
from pydantic import BaseModel

from webapp.core.context import CallContext, InputRequired, MissingCapability
from webapp.responses.builder import framework_error, text_result, validation_error
from webapp.responses.codes import error_code
from webapp.responses.presenter import Presenter
from webapp.responses.toon import toon_description_text
from webapp.tools.action import Action, Handler, handler_name, make_action, wrap_result
from webapp.tools.once import CALL_ID, call_once, failure
from webapp.tools.outcomes import OutcomeStore
from webapp.tools.schema import SELECT_PROPERTY, action_union, with_extra_properties
from webapp.tools.validation import DEFAULT_LIMITS, ArgumentLimits, InvalidArguments, limit_problems, reserved_problems
from webapp.wire import render_tool_error

__all__ = [
    "RESULT_VIEW_URI",
    "Action",
    "Handler",
    "Tool",
    "ToolLike",
    "ToolRegistry",
    "app_only",
    "links_result_view",
    "wrap_result",
]

logger = logging.getLogger(__name__)


class ToolLike(Protocol):
    """What the server and the viewer need of a registered tool (a `Tool`, or an app's tool)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def input_schema(self) -> dict[str, Any]: ...
    @property
    def output_schema(self) -> dict[str, Any] | None: ...
    @property
    def title(self) -> str | None: ...
    @property
    def annotations(self) -> mcp_types.ToolAnnotations | None: ...
    @property
    def icons(self) -> list[mcp_types.Icon] | None: ...


_DISCRIMINATOR: Final = "action"
_ABSENT: Final = object()
_JS_TYPEOF: Final = {bool: "boolean", int: "number", float: "number", str: "string"}
RESULT_VIEW_URI: Final = "ui://webapp/result"
"""The MCP Apps widget that renders a tool's presenter blocks inline in a host (rendering.md §4)."""


def links_result_view(tool: ToolLike) -> bool:
    """Whether `tool` links the result widget in `tools/list` (its `_meta.ui.resourceUri`)."""
    meta: dict[str, Any] = getattr(tool, "meta", None) or {}
    ui = meta.get("ui")
    return isinstance(ui, dict) and cast(dict[str, Any], ui).get("resourceUri") == RESULT_VIEW_URI


def app_only(tool: ToolLike) -> bool:
    """Whether only views may call `tool` (`_meta.ui.visibility: ["app"]`): a view's plumbing, kept out of the call
    log and the viewer."""
    meta: dict[str, Any] = getattr(tool, "meta", None) or {}
    ui = meta.get("ui")
    return isinstance(ui, dict) and cast(dict[str, Any], ui).get("visibility") == ["app"]


def _discriminator_error(code: str, actions: list[str], **values: object) -> mcp_types.CallToolResult:
    """The §10 form of a discriminator error: no severity, the actions on one line before the recovery."""
    message, recovery = error_code(code).texts(**values)
    text = render_tool_error(
        code=code, message=message, recovery=recovery, available_actions=actions, actions_inline=True
    )
    return text_result([text], is_error=True)


class Tool:
    """A plain tool (`handler=`) or a tool whose `.action()`s are chosen by the `action` argument.

    A tool with a Presenter (`returns=`) links the result widget `RESULT_VIEW_URI`; `result_view=True/False` links
    it or not whatever the Presenters (MCP Apps hosts then render its results inline).

    `title` is the name hosts show people; `annotations` (`mcp_types.ToolAnnotations`: `read_only_hint`,
    `destructive_hint`, `idempotent_hint`, `open_world_hint`) and `icons` (`mcp_types.Icon`s) are listed in
    `tools/list` as given: hints for clients, which the server does not enforce.

    The input schema is the `input=` model's JSON schema with every keyword as written (its `json_schema_extra`:
    `$schema`, `allOf`, `if`/`then`/`else`…; a sub-model's, such as `$anchor`, in its entry of `$defs`) except the
    `title` and `description` pydantic takes from the class; `additionalProperties` is always false. Pydantic
    checks the arguments, not those keywords. An action's model adds none: one flat schema serves all actions."""

    def __init__(
        self,
        name: str,
        *,
        description: str,
        handler: Handler | None = None,
        input: type[BaseModel] | None = None,
        returns: Presenter | None = None,
        result_view: bool | None = None,
        title: str | None = None,
        annotations: mcp_types.ToolAnnotations | None = None,
        icons: Sequence[mcp_types.Icon] | None = None,
    ) -> None:
        if not name:
            raise ValueError("A tool needs a non-empty name.")
        if handler is None and (input is not None or returns is not None):
            raise ValueError(f"Tool {name!r}: input= and returns= need handler=; for actions pass them to .action().")
        self.name = name
        self.title = title
        self.annotations = annotations
        self.icons = list(icons) if icons else None
        self._description = description
        self._plain = make_action(name, name, handler, input, returns, "", False) if handler is not None else None
        self._actions: dict[str, Action] = {}
        self._select = False
        self._select_union: list[str] | None = None
        self._toon = False
        self._reserved: dict[str, dict[str, Any]] = {}
        self._outcomes: OutcomeStore | None = None
        self.output_schema: dict[str, Any] | None = None
        self._meta: dict[str, Any] | None = None
        self.limits: ArgumentLimits | None = None
        """Argument limits of this tool in place of the registry's (`with_limits`)."""
        self._result_view = result_view
        self._input_schema = self._build_schema()

    def __repr__(self) -> str:
        handlers = ", ".join(handler_name(action.handler) for action in self._all_actions())
        return f"Tool({self.name!r}, handlers: {handlers or 'none'})"

    def _all_actions(self) -> list[Action]:
        return [self._plain] if self._plain is not None else list(self._actions.values())

    def _build_schema(self) -> dict[str, Any]:
        if self._plain is not None:
            base = self._plain.schema
        else:
            base = action_union(self.name, [(action.name, action.schema) for action in self._actions.values()])
        keys = [key for a in self._all_actions() if a.returns is not None for key in a.returns.schema_keys()]
        keys += self._select_union or []
        return with_extra_properties(base, self._reserved, keys if self._select else (), self.name)

    def _rebuilt(self) -> Tool:
        self._input_schema = self._build_schema()
        return self

    # -- definition ------------------------------------------------------------------------------------------------

    def action(
        self,
        name: str,
        handler: Handler,
        *,
        input: type[BaseModel] | None = None,
        returns: Presenter | None = None,
        description: str = "",
        destructive: bool = False,
    ) -> Tool:
        """Add an action chosen by `{"action": name}`; its own input model is checked when it is chosen."""
        if self._plain is not None:
            raise ValueError(f"Tool {self.name!r} has handler=, so it cannot have actions; use one or the other.")
        if not name:
            raise ValueError(f"Tool {self.name!r}: an action needs a non-empty string name; got {name!r}.")
        if name in self._actions:
            raise ValueError(f"Tool {self.name!r} already has an action {name!r}; action names must be unique.")
        previous = dict(self._actions)
        label = f"{self.name}/{name}"
        self._actions[name] = make_action(label, name, handler, input, returns, description, destructive)
        try:
            return self._rebuilt()
        except ValueError:
            self._actions = previous
            raise

    def enable_select(self, keys: Iterable[str] = ()) -> Tool:
        """Add `_select` (the union of the Presenters' top-level keys, plus `keys`) to the input schema."""
        self._select = True
        self._select_union = list(keys)
        return self._rebuilt()

    def toon_description(self) -> Tool:
        """Describe the actions as a TOON table (`action|desc|required`) after the description."""
        if self._plain is not None:
            raise ValueError(f"Tool {self.name!r} is a plain tool: toon_description() describes actions.")
        self._toon = True
        return self

    def with_output_schema(self, model: type[BaseModel]) -> Tool:
        """Declare `outputSchema` (for `success_structured` results)."""
        schema = model.model_json_schema()
        if schema.get("type") != "object":
            raise ValueError(f"Tool {self.name!r}: the output model {model.__name__} must have an object JSON schema.")
        self.output_schema = schema
        return self

    def with_meta(self, meta: dict[str, Any]) -> Tool:
        """Set the tool's `_meta` in `tools/list` (a `ui.resourceUri` there wins over the result widget)."""
        self._meta = copy.deepcopy(meta)
        return self

    def with_limits(self, limits: ArgumentLimits) -> Tool:
        """Check this tool's arguments against `limits` instead of the registry's (a tool that carries page bytes)."""
        self.limits = limits
        return self

    def keep_outcomes(self, store: OutcomeStore) -> Tool:
        """Calls that send the reserved `_call_id` act once: a retry gets the stored result (`tools.outcomes`)."""
        if CALL_ID not in self._reserved:
            raise ValueError(f"Tool {self.name!r}: reserve {CALL_ID!r} before keeping outcomes by it.")
        self._outcomes = store
        return self

    def reserve(self, name: str, schema: dict[str, Any]) -> Tool:
        """Add an optional reserved property to every action; the handler gets it as `reserved` (when sent)."""
        if name in (_DISCRIMINATOR, SELECT_PROPERTY) or name in self._reserved:
            raise ValueError(f"Tool {self.name!r}: {name!r} is already reserved.")
        self._reserved[name] = dict(schema)
        try:
            return self._rebuilt()
        except ValueError:
            del self._reserved[name]
            raise

    # -- what tools/list shows -------------------------------------------------------------------------------------

    @property
    def description(self) -> str:
        if not self._toon:
            return self._description
        rows = [
            {
                "action": action.name,
                "desc": action.description,
                "required": action.schema.get("required", []),
                "destructive": action.destructive,
            }
            for action in self._actions.values()
        ]
        return toon_description_text(self._description, rows)

    @property
    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(self._input_schema)

    @property
    def meta(self) -> dict[str, Any] | None:
        """The tool's `_meta` in `tools/list`: what `with_meta` set, and MCP Apps' link to the result widget."""
        meta = copy.deepcopy(self._meta) if self._meta is not None else {}
        presents = any(action.returns is not None for action in self._all_actions())
        ui: dict[str, Any] = meta.setdefault("ui", {})
        if "resourceUri" not in ui and (presents if self._result_view is None else self._result_view):
            ui["resourceUri"] = RESULT_VIEW_URI
        if not ui:
            del meta["ui"]
        return meta or None

    @property
    def actions(self) -> list[Action]:
        """The actions (for a plain tool: its single action, named after the tool)."""
        return self._all_actions()

    def to_mcp(self) -> mcp_types.Tool:
        return mcp_types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            output_schema=copy.deepcopy(self.output_schema),
            annotations=self.annotations,
            icons=self.icons,
            _meta=self.meta,
        )

    # -- calling ---------------------------------------------------------------------------------------------------

    def _choose(self, arguments: dict[str, Any]) -> Action | mcp_types.CallToolResult:
        if self._plain is not None:
            return self._plain
        names = list(self._actions)
        chosen = arguments.pop(_DISCRIMINATOR, _ABSENT)
        if chosen is _ABSENT or chosen == "":
            return _discriminator_error("MISSING_DISCRIMINATOR", names)
        if not isinstance(chosen, str):
            kind = _JS_TYPEOF.get(type(chosen), "object")
            return _discriminator_error("INVALID_DISCRIMINATOR", names, kind=kind)
        if chosen not in self._actions:
            return _discriminator_error("UNKNOWN_ACTION", names, action=chosen)
        return self._actions[chosen]

    async def call(self, arguments: Mapping[str, Any] | None, ctx: Any = None) -> mcp_types.CallToolResult:
        """Validate, run the handler and wrap its value; every failure is an envelope, never an exception."""
        args = dict(arguments or {})
        raw_select = args.pop(SELECT_PROPERTY, None)
        chosen = self._choose(args)
        if isinstance(chosen, mcp_types.CallToolResult):
            return chosen
        reserved = {name: args.pop(name) for name in self._reserved if name in args}
        bad_reserved = reserved_problems(reserved, self._reserved)
        try:
            params = chosen.arguments.validate(args)
        except InvalidArguments as invalid:
            return validation_error(chosen.label, invalid.fields + bad_reserved)
        if bad_reserved:
            return validation_error(chosen.label, bad_reserved)
        select = _select_keys(raw_select) if self._select else None
        if isinstance(ctx, CallContext):
            present = functools.partial(wrap_result, presenter=chosen.returns, ctx=ctx, select=select)
            ctx = dataclasses.replace(ctx, present=present)
        if self._outcomes is not None and CALL_ID in reserved and isinstance(ctx, CallContext):
            return await call_once(self._outcomes, self.name, chosen, params, ctx, reserved, select)
        try:
            value = await chosen.run(params, ctx, reserved)
            return wrap_result(value, chosen.returns, ctx, select)
        except (InputRequired, MissingCapability):
            raise  # the call asks its client: the server answers the round (webapp.server.asking)
        except Exception as exc:
            return failure(chosen.label, exc)


def _select_keys(value: Any) -> list[str] | None:
    """`_select` counts only as a non-empty list of strings."""
    if isinstance(value, list) and value and all(isinstance(key, str) for key in value):  # pyright: ignore
        return list(value)  # pyright: ignore[reportUnknownArgumentType]
    return None


class ToolRegistry:
    """The tools of one server, by unique name; arguments beyond `limits` are refused before any tool sees them."""

    def __init__(self, tools: Iterable[Tool] = (), *, limits: ArgumentLimits = DEFAULT_LIMITS) -> None:
        self._tools: dict[str, Tool] = {}
        self.limits = limits
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> Tool:
        """Register `tool`; a second tool of the same name, or one without a handler or actions, is refused."""
        existing = self._tools.get(tool.name)
        if existing is not None:
            raise ValueError(
                f"Two tools are named {tool.name!r}: {existing!r} and {tool!r}. Give each tool a unique name."
            )
        if not tool.actions:
            raise ValueError(f"{tool!r} has neither handler= nor actions; add one before registering it.")
        self._tools[tool.name] = tool
        return tool

    def get(self, name: str) -> Tool | None:
        """The tool named `name`, or None."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def tools(self) -> list[Tool]:
        """Every tool, in the order they were added."""
        return list(self._tools.values())

    async def call(self, name: str, arguments: Mapping[str, Any] | None, ctx: Any = None) -> mcp_types.CallToolResult:
        """Call the tool `name`: an unknown tool or oversized arguments get an error envelope, never an exception."""
        tool = self._tools.get(name)
        if tool is None:
            return framework_error("UNKNOWN_TOOL", tool=name)
        too_large = limit_problems(arguments or {}, tool.limits or self.limits)
        if too_large:
            return validation_error(name, too_large)
        return await tool.call(arguments, ctx)
