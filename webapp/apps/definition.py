"""MCP apps: the `@mcp_app` and `@mcp_app_action` marks, the update event, and the collected definitions.

The decorators only mark; `webapp.app_naming.collect_app` reads the marks when the server starts and checks them.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from webapp.apps.host import Host

__all__ = [
    "ACTION_MARK",
    "APP_MARK",
    "INPUT_CHECK",
    "OBSERVER",
    "ActionDefinition",
    "ActionMark",
    "AppDefinition",
    "AppDefinitionError",
    "AppMark",
    "McpAppUpdateEvent",
    "ViewContext",
    "mcp_app",
    "mcp_app_action",
]

APP_MARK = "__mcp_app__"
ACTION_MARK = "__mcp_app_action__"
OBSERVER = "on_mcp_app_update"
INPUT_CHECK = "check_mcp_app_input"

C = TypeVar("C", bound=type)
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)
InputT = TypeVar("InputT")


class AppDefinitionError(Exception):
    """An app, action or tool name is defined wrongly; raised when the server starts. The message says the fix."""


@dataclass(frozen=True, slots=True)
class AppMark:
    description: str
    route: str
    name: str | None
    input: type[BaseModel] | None
    actions: tuple[Any, ...]
    select: bool


@dataclass(frozen=True, slots=True)
class ActionMark:
    description: str
    name: str | None
    returns: Any
    result_view: bool | None
    scope: str | None = None


def mcp_app(
    *,
    description: str,
    route: str,
    name: str | None = None,
    input: type[BaseModel] | None = None,
    actions: Sequence[Any] = (),
    select: bool = False,
) -> Callable[[C], C]:
    """Mark a NiceGUI view class as an MCP app whose opening tool shows it at `route`.

    `description` tells hosts when to open the view; `input` is the opening tool's pydantic model; `actions` lists
    classes (or instances) holding more `@mcp_app_action` methods; `select=True` adds `_select` to action tools.
    The class is built in the tab's page as `cls(view: ViewContext)` (or `cls()`).

    Optional hooks on the class: `async def on_mcp_app_update(self, event)` (the update observer), and
    `@classmethod def check_mcp_app_input(cls, params, *, ctx=None) -> CallToolResult | None` (sync or async), which
    the opening and update tools call with the validated input (None without `input=`) before they route or open
    anything: a returned tool result (e.g. `tool_error(...)`) is the tool's answer and no view is opened, reused or
    changed; None lets the call go on.
    """
    mark = AppMark(description, route, name, input, tuple(actions), select)

    def decorate(cls: C) -> C:
        setattr(cls, APP_MARK, mark)
        return cls

    return decorate


def mcp_app_action(
    *,
    description: str,
    name: str | None = None,
    returns: Any = None,
    result_view: bool | None = None,
    scope: str | None = None,
) -> Callable[[F], F]:
    """Mark a method as an action tool `{app}_{name or snake_case(method)}`.

    On the view: `(self)` or `(self, params: Model)`; in an actions class: `(self, view)` or `(self, view, params)`.
    Any of them may take a keyword `ctx` (the call's context). `returns` is a Presenter for the result; an action
    with one links the result widget for MCP Apps hosts (`ui://webapp/result`), which `result_view=True/False`
    turns on or off. `scope` is the OAuth scope a call needs with sign-in on (besides `--auth-scope`), e.g.
    `"inventory:write"`.
    """
    if scope is not None and not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", scope):
        raise ValueError(f"an action's scope is one word without spaces, quotes or backslashes, got {scope!r}")
    mark = ActionMark(description, name, returns, result_view, scope)

    def decorate(function: F) -> F:
        setattr(function, ACTION_MARK, mark)
        return function

    return decorate


@dataclass(frozen=True, slots=True)
class McpAppUpdateEvent:
    """The arguments of an update (or of a reused opening call), delivered to `on_mcp_app_update(event)`."""

    tool: str
    arguments: Mapping[str, Any]
    fields_set: frozenset[str]

    def arguments_as(self, model: type[M]) -> M:
        """The arguments validated as `model`."""
        return model.model_validate(dict(self.arguments))


class ViewContext(Generic[InputT]):
    """What the framework hands a view when it builds it in a tab.

    `input` is the opening tool's input (None when the app has none or a person opened the route without one);
    `data` is the view's own state, saved after every call and restored on reload and restart: keep there what the
    view must show again. `save()` stores `data` at once (for changes made by the person in the tab). `host` is the
    MCP Apps host the view is shown in (`webapp.Host`), None in a plain browser tab.
    """

    def __init__(
        self,
        *,
        app: str,
        input: InputT | None,
        data: dict[str, Any],
        save: Callable[[], None],
        host: Host | None = None,
    ) -> None:
        self.app = app
        self.input = input
        self.data = data
        self.host = host
        self._save = save

    @property
    def embedded(self) -> bool:
        """Whether the view is shown inline in an MCP Apps host."""
        return self.host is not None

    def save(self) -> None:
        """Store `data` now (the framework saves it after every call; a change made in the tab needs this)."""
        self._save()


@dataclass(frozen=True, slots=True)
class ActionDefinition:
    """One action tool, checked."""

    tool: str
    description: str
    owner: type
    method: str
    params: type[BaseModel] | None
    on_view: bool
    takes_ctx: bool
    returns: Any
    output_model: type[BaseModel] | None
    result_view: bool | None = None
    scope: str | None = None

    @property
    def label(self) -> str:
        return f"{self.owner.__name__}.{self.method}"


@dataclass(frozen=True, eq=False)
class AppDefinition:
    """One app, checked: its names, tools and how to build its view."""

    cls: type
    name: str
    route: str
    description: str
    input: type[BaseModel] | None
    actions: tuple[ActionDefinition, ...]
    has_observer: bool
    select: bool
    init_takes_view: bool
    holders: Mapping[type, object] = field(default_factory=dict[type, object])  # one instance per actions class
    input_check: Callable[..., Any] | None = None  # the class's `check_mcp_app_input`, bound
    input_check_takes_ctx: bool = False

    @property
    def update_tool(self) -> str:
        return f"{self.name}_update"

    @property
    def resource_uri(self) -> str:
        """The `ui://` resource MCP Apps hosts render for the opening tool (apps.md §13)."""
        return f"ui://{self.name}/view"

    def tool_claims(self) -> list[tuple[str, str]]:
        """Every tool name this app claims, with who claims it (for the duplicate check)."""
        claims = [(self.name, f"the opening tool of app class {self.cls.__name__}")]
        if self.has_observer:
            claims.append((self.update_tool, f"the update tool of {self.cls.__name__}.{OBSERVER}"))
        claims += [(action.tool, f"the action {action.label}") for action in self.actions]
        return claims

    def parse_input(self, arguments: Mapping[str, Any] | None) -> Any:
        """The opening input as the app's model (None without a model, or when `arguments` do not validate)."""
        if self.input is None:
            return None
        try:
            return self.input.model_validate(dict(arguments or {}))
        except ValueError:
            return None

    async def check_input(self, params: BaseModel | None, ctx: Any) -> Any:
        """What `check_mcp_app_input` answers for an opening or update call: a result refusing it, or None."""
        if self.input_check is None:
            return None
        value = self.input_check(params, ctx=ctx) if self.input_check_takes_ctx else self.input_check(params)
        return await value if inspect.isawaitable(value) else value

    def build_view(self, context: ViewContext[Any]) -> object:
        """Create the app's view object in the current NiceGUI slot."""
        return self.cls(context) if self.init_takes_view else self.cls()

    def bound_action(self, action: ActionDefinition, view: object) -> Callable[..., Any]:
        """The action's method bound for a call on `view`: `view.method` or `holder.method` with `view` first."""
        if action.on_view:
            return getattr(view, action.method)
        method = getattr(self.holders[action.owner], action.method)
        return lambda *args, **kwargs: method(view, *args, **kwargs)
