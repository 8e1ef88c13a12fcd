"""Reading `@mcp_app` classes at startup: tool names (apps.md §2) and every definition check.

Each failure raises `AppDefinitionError` naming the class and method and saying the fix.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import mcp_types
from pydantic import BaseModel

from webapp.apps.definition import (
    ACTION_MARK,
    APP_MARK,
    INPUT_CHECK,
    OBSERVER,
    ActionDefinition,
    ActionMark,
    AppDefinition,
    AppDefinitionError,
    AppMark,
)

__all__ = ["FRAMEWORK_TOOLS", "TOOL_NAME", "app_name", "check_claims", "collect_app", "snake_case"]

TOOL_NAME = re.compile(r"^[a-z0-9_]{1,64}$")
FRAMEWORK_TOOLS = ("webapp_tunnel_open", "webapp_tunnel_http", "webapp_tunnel_close")
"""Tool names the framework claims for itself: a tunnelled view's socket (apps.md §13)."""
_CTX = "ctx"


def snake_case(name: str) -> str:
    """`refreshHTTPStock` → `refresh_http_stock` (acronyms stay one word); snake_case names stay as they are."""
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words).lower()


def app_name(route: str) -> str:
    """`/sales/inventory` → `sales_inventory`; `/` → `app`."""
    trimmed = route.strip("/")
    return trimmed.replace("/", "_").lower() if trimmed else "app"


def collect_app(cls: type) -> AppDefinition:
    """The checked definition of an `@mcp_app` class, its actions and their tool names."""
    mark = getattr(cls, APP_MARK, None)
    where = cls.__name__
    if not isinstance(mark, AppMark):
        raise AppDefinitionError(f"{where} is not an MCP app. Fix: decorate the class with @mcp_app(...).")
    if not mark.description.strip():
        raise AppDefinitionError(
            f"@mcp_app on {where}: the description is blank. Fix: say what the view shows and when to open it, "
            'e.g. description="Shows the stock levels of one warehouse."'
        )
    if not mark.route.startswith("/"):
        raise AppDefinitionError(f"@mcp_app on {where}: route must start with '/', got {mark.route!r}.")
    name = mark.name or app_name(mark.route)
    _check_name(name, f"@mcp_app on {where}", "set name='...' on @mcp_app to a name of lower-case letters, digits, _")
    if mark.input is not None:
        _check_model(mark.input, f"@mcp_app on {where}: input")
    init_takes_view = _init_takes_view(cls)
    has_observer = _check_observer(cls)
    input_check, input_check_takes_ctx = _input_check(cls)
    if has_observer:
        _check_name(f"{name}_update", f"{where}.{OBSERVER}", "shorten the app name (name='...' on @mcp_app)")
    actions = [_action(name, cls, function, mark_, on_view=True) for function, mark_ in _marked(cls)]
    holders: dict[type, object] = {}
    for entry in mark.actions:
        holder_cls = entry if isinstance(entry, type) else type(entry)
        holders[holder_cls] = _instantiate(holder_cls, where) if isinstance(entry, type) else entry
        marked = _marked(holder_cls)
        if not marked:
            raise AppDefinitionError(
                f"@mcp_app on {where}: actions class {holder_cls.__name__} has no @mcp_app_action method. "
                "Fix: mark its methods with @mcp_app_action(...) or remove it from actions=."
            )
        actions += [_action(name, holder_cls, function, mark_, on_view=False) for function, mark_ in marked]
    app = AppDefinition(
        cls=cls,
        name=name,
        route=mark.route,
        description=mark.description.strip(),
        input=mark.input,
        actions=tuple(actions),
        has_observer=has_observer,
        select=mark.select,
        init_takes_view=init_takes_view,
        holders=holders,
        input_check=input_check,
        input_check_takes_ctx=input_check_takes_ctx,
    )
    check_claims(app.tool_claims())
    return app


def check_claims(claims: Iterable[tuple[str, str]]) -> None:
    """Two claimants of one tool name (apps, actions, update tools, plain tools) are an error naming both."""
    seen: dict[str, str] = {}
    for tool, who in claims:
        if tool in seen:
            raise AppDefinitionError(
                f"The tool name {tool!r} is claimed twice: by {seen[tool]} and by {who}. "
                "Fix: give one of them another name (name=... on @mcp_app or @mcp_app_action)."
            )
        seen[tool] = who


def _check_name(tool: str, where: str, fix: str) -> None:
    if not TOOL_NAME.match(tool):
        raise AppDefinitionError(f"{where}: the tool name {tool!r} breaks the pattern ^[a-z0-9_]{{1,64}}$. Fix: {fix}.")


def _check_model(model: Any, where: str) -> None:
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise AppDefinitionError(f"{where} must be a pydantic model class, got {model!r}. Fix: annotate a BaseModel.")
    schema_type = model.model_json_schema().get("type")
    if schema_type != "object":
        raise AppDefinitionError(
            f"{where} {model.__name__} has a JSON schema of type {schema_type!r}, not 'object'. "
            "Fix: use a BaseModel with fields (not a RootModel) so its properties become the tool's input."
        )


def _marked(owner: type) -> list[tuple[Callable[..., Any], ActionMark]]:
    """The marked methods of `owner` (bases first, declaration order; an override keeps its base's place)."""
    found: dict[str, tuple[Callable[..., Any], ActionMark]] = {}
    for klass in reversed(owner.__mro__[:-1]):
        for attr, value in vars(klass).items():
            function = value.__func__ if isinstance(value, staticmethod | classmethod) else value
            mark = getattr(function, ACTION_MARK, None)
            if isinstance(mark, ActionMark):
                if function is not value:
                    raise AppDefinitionError(
                        f"@mcp_app_action on {klass.__name__}.{attr}: it must be a plain method, not a "
                        "staticmethod or classmethod. Fix: remove @staticmethod/@classmethod."
                    )
                found[attr] = (function, mark)
            elif attr in found:
                del found[attr]  # overridden without the mark: no longer an action
    return list(found.values())


def _action(
    app: str, owner: type, function: Callable[..., Any], mark: ActionMark, *, on_view: bool
) -> ActionDefinition:
    where = f"@mcp_app_action on {owner.__name__}.{function.__name__}"
    if not mark.description.strip():
        raise AppDefinitionError(
            f"{where}: the description is blank. Fix: say what the action does in one sentence, "
            'e.g. description="Refreshes the stock levels of the open warehouse."'
        )
    tool = f"{app}_{mark.name or snake_case(function.__name__)}"
    _check_name(tool, where, "set name='...' on @mcp_app_action to lower-case letters, digits and _")
    expected = "(self, params: Model)" if on_view else "(self, view, params: Model)"
    shape = "(self) or " + expected if on_view else "(self, view) or " + expected
    positional, takes_ctx = _parameters(function, where, shape)
    hints = _hints(function, where)
    wanted = 1 if on_view else 2
    if len(positional) not in (wanted, wanted + 1):
        raise AppDefinitionError(f"{where}: bad signature {inspect.signature(function)}. Fix: use {shape}.")
    params: type[BaseModel] | None = None
    if len(positional) == wanted + 1:
        params = hints.get(positional[-1])
        _check_model(params, f"{where}: the parameter {positional[-1]!r}")
    returned = hints.get("return")
    output: type[BaseModel] | None = None
    if isinstance(returned, type) and issubclass(returned, BaseModel):  # a tool result itself is no output schema
        output = None if issubclass(returned, mcp_types.CallToolResult) else returned
    return ActionDefinition(
        tool=tool,
        description=mark.description.strip(),
        owner=owner,
        method=function.__name__,
        params=params,
        on_view=on_view,
        takes_ctx=takes_ctx,
        returns=mark.returns,
        output_model=output,
        result_view=mark.result_view,
        scope=mark.scope,
    )


def _parameters(function: Callable[..., Any], where: str, shape: str) -> tuple[Sequence[str], bool]:
    """The positional parameter names (self included) and whether a keyword `ctx` is accepted."""
    positional: list[str] = []
    takes_ctx = False
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name == _CTX and parameter.kind is not parameter.POSITIONAL_ONLY:
            takes_ctx = True
        elif parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            positional.append(parameter.name)
        else:
            raise AppDefinitionError(
                f"{where}: bad signature {inspect.signature(function)}: unexpected parameter {parameter.name!r}. "
                f"Fix: use {shape}, optionally with a keyword parameter 'ctx'."
            )
    return positional, takes_ctx


def _hints(function: Callable[..., Any], where: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(function)
    except Exception as error:
        raise AppDefinitionError(
            f"{where}: its type annotations cannot be resolved ({error}). Fix: import the annotated types at module "
            "level of the module defining it."
        ) from error


def _init_takes_view(cls: type) -> bool:
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [p for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if len(required) > 1 or any(p.kind is p.KEYWORD_ONLY for p in required):
        raise AppDefinitionError(
            f"@mcp_app on {cls.__name__}: bad signature of __init__{inspect.signature(cls)}. "
            "Fix: use __init__(self) or __init__(self, view: ViewContext[YourInput])."
        )
    return bool(parameters) and parameters[0].kind in (
        parameters[0].POSITIONAL_ONLY,
        parameters[0].POSITIONAL_OR_KEYWORD,
    )


def _check_observer(cls: type) -> bool:
    observer = getattr(cls, OBSERVER, None)
    if observer is None:
        return False
    where = f"{cls.__name__}.{OBSERVER}"
    if not callable(observer):
        raise AppDefinitionError(f"{where} must be a method (self, event). Fix: define async def {OBSERVER}(...).")
    positional, _ = _parameters(observer, where, "(self, event)")
    if len(positional) != 2:
        raise AppDefinitionError(
            f"{where}: bad signature {inspect.signature(observer)}. Fix: use async def {OBSERVER}(self, event)."
        )
    return True


def _input_check(cls: type) -> tuple[Callable[..., Any] | None, bool]:
    """The class's optional `check_mcp_app_input` classmethod (bound) and whether it takes the keyword `ctx`."""
    found = inspect.getattr_static(cls, INPUT_CHECK, None)
    if found is None:
        return None, False
    where = f"{cls.__name__}.{INPUT_CHECK}"
    shape = f"@classmethod def {INPUT_CHECK}(cls, params, *, ctx=None), sync or async"
    if not isinstance(found, classmethod):
        raise AppDefinitionError(
            f"{where} must be a classmethod: it checks the input before any view exists. Fix: define {shape}, "
            "returning a tool result such as tool_error(...) to refuse the input, or None to go on."
        )
    function = found.__func__
    positional, takes_ctx = _parameters(function, where, "(cls, params)")
    if len(positional) != 2:
        raise AppDefinitionError(f"{where}: bad signature {inspect.signature(function)}. Fix: use {shape}.")
    return getattr(cls, INPUT_CHECK), takes_ctx


def _instantiate(holder: type, app: str) -> object:
    try:
        return holder()
    except TypeError as error:
        raise AppDefinitionError(
            f"@mcp_app on {app}: actions class {holder.__name__} cannot be built without arguments ({error}). "
            f"Fix: give {holder.__name__}.__init__ no required parameters, or list an instance in actions=."
        ) from error
