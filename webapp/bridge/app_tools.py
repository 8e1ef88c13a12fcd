"""The MCP tools of apps (apps.md §3–§5): opening, update and action tools, each wired to the bridge.

`install_apps(webapp, *view_classes)` checks the apps, serves their pages and adds their tools to the server.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, cast

import mcp_types
from pydantic import BaseModel, ConfigDict

from webapp.apps.definition import INPUT_CHECK, ActionDefinition, AppDefinition, McpAppUpdateEvent
from webapp.apps.naming import FRAMEWORK_TOOLS, check_claims, collect_app
from webapp.apps.prompts import app_prompts
from webapp.bridge.dispatch import Bridge, BridgeSettings
from webapp.bridge.errors import ViewError
from webapp.bridge.registry import ViewRecord, ViewState
from webapp.bridge.store import ViewStore
from webapp.bridge.transport import Forwarded
from webapp.calllog.memory import CallLog
from webapp.core.context import CallContext, Caller
from webapp.core.settings import Settings
from webapp.events import AppEvents
from webapp.responses.builder import ErrorBuilder, ResponseBuilder, Suggestion, response, success_structured
from webapp.responses.presenter import Presenter
from webapp.tools.outcomes import Outcome, OutcomeStore
from webapp.tools.prompts import Prompt
from webapp.tools.registry import Tool, ToolLike

__all__ = [
    "CALL_ID_PROPERTY",
    "VIEW_META",
    "VIEW_PROPERTY",
    "AppServer",
    "OpenedView",
    "app_result",
    "app_tools",
    "first_sentence",
    "install_apps",
    "update_description",
]

VIEW_PROPERTY: dict[str, Any] = {
    "type": "string",
    "maxLength": 64,
    "description": "Id of the open view to act on, as returned by the opening tool. "
    "Needed only when several views are open.",
}
CALL_ID_PROPERTY: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "description": "Your id for this call (any unique string). Send the same id when you retry the call after an "
    "error that says the action may not have run: the change is then made once.",
}
VIEW_META = "webapp/view"
"""The opening result's `_meta` key (for every client): the view's app, handle, URL and a one-time boot ticket."""
_NO_CALLER = Caller(principal=None, session_id=None, protocol="direct")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


OpenState = Literal["pending", "live", "disconnected"]


class OpenedView(BaseModel):
    """The opening tool's structured result."""

    model_config = ConfigDict(extra="forbid")

    app: str
    view: str
    state: OpenState
    url: str
    reused: bool


def update_description(app: str) -> str:
    return (
        f"Applies new input to the '{app}' view that is already open, without rendering it again. "
        f"Call '{app}' first when it is not open."
    )


def first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


class _Tools(Protocol):
    def tools(self) -> Sequence[ToolLike]: ...


class AppServer(Protocol):
    """What `install_apps` needs of the server (`webapp.WebApp`)."""

    settings: Settings
    calllog: CallLog
    events: AppEvents

    @property
    def registry(self) -> _Tools: ...
    @property
    def base_url(self) -> str: ...
    def add_tool(self, tool: Tool) -> None: ...
    def add_prompt(self, prompt: Prompt, /) -> object: ...
    def open_in_browser(self, url: str) -> bool: ...
    def on_startup(self, hook: Callable[[], Awaitable[None] | None]) -> object: ...
    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None]) -> object: ...
    def on_session_end(self, hook: Callable[[str], Awaitable[None] | None]) -> object: ...
    def apps_installed(self, bridge: Bridge, /) -> None:
        """Called with the bridge of the apps just installed (the server shows their views inline in hosts)."""
        ...


def install_apps(webapp: AppServer, *classes: type) -> Bridge:
    """Check the `@mcp_app` classes (AppDefinitionError on the first problem), serve their pages, add their tools,
    and run the bridge with the server (views restored at start, sessions followed, data saved at shutdown)."""
    apps = [collect_app(cls) for cls in classes]
    claims = [(tool.name, f"the tool {tool.name!r} added before") for tool in webapp.registry.tools()]
    added = {name for name, _ in claims}
    claims += [(name, "the framework (a tunnelled view's socket)") for name in FRAMEWORK_TOOLS if name not in added]
    check_claims(claims + [claim for app in apps for claim in app.tool_claims()])
    settings = webapp.settings

    def open_in_browser(view: ViewRecord) -> None:
        webapp.open_in_browser(bridge.url(view, webapp.base_url))

    bridge = Bridge(
        BridgeSettings.from_settings(settings),
        ViewStore(settings.db),
        on_secret=webapp.calllog.add_secret,
        on_forget_secret=webapp.calllog.discard_secret,
        on_new_view=open_in_browser,
        events=webapp.events,
    )
    # an attempt holds its `_call_id` at most as long as it can run (waiting for a tab, then the call timeout)
    outcomes = OutcomeStore(settings.db, claim_for=settings.wait_for_live + settings.call_timeout + 2.0)
    bridge.outcomes = outcomes
    for app in apps:
        bridge.add_app(app)
        for tool in app_tools(app, bridge, outcomes):
            webapp.add_tool(tool)
        for prompt in app_prompts(app.name, app.cls):
            webapp.add_prompt(prompt)
    webapp.on_startup(outcomes.open)
    webapp.on_startup(bridge.start)
    webapp.on_shutdown(bridge.stop)
    webapp.on_shutdown(outcomes.close)
    webapp.on_session_end(bridge.session_ended)
    webapp.apps_installed(bridge)
    return bridge


def app_tools(app: AppDefinition, bridge: Bridge, outcomes: OutcomeStore | None = None) -> list[Tool]:
    """The app's tools in `tools/list` order: opening, update (if observed), actions (with `outcomes`, a call with a
    `_call_id` acts once)."""
    tools = [_opening_tool(app, bridge)]
    if app.has_observer:
        tools.append(_update_tool(app, bridge))
    select_keys = _select_keys(app)
    tools += [_action_tool(app, action, bridge, select_keys, outcomes) for action in app.actions]
    return tools


def _handler(
    model: type[BaseModel] | None, run: Callable[[BaseModel | None, CallContext | None, dict[str, Any]], Awaitable[Any]]
) -> Callable[..., Awaitable[Any]]:
    """A tools-layer handler: `(params, *, ctx, reserved)`, or `(*, ctx, reserved)` for a tool without input."""
    if model is None:

        async def bare(*, ctx: CallContext | None, reserved: dict[str, Any]) -> Any:
            return await run(None, ctx, reserved)

        return bare

    async def with_params(params: BaseModel, *, ctx: CallContext | None, reserved: dict[str, Any]) -> Any:
        return await run(params, ctx, reserved)

    return with_params


def _view_id(reserved: dict[str, Any]) -> str | None:
    value = reserved.get("_view")
    return None if value is None else str(value)


def _arguments(params: BaseModel | None) -> dict[str, Any]:
    return {} if params is None else params.model_dump(mode="json", exclude_unset=True)


async def _refusal(app: AppDefinition, params: BaseModel | None, ctx: CallContext | None) -> Any:
    """The app's `check_mcp_app_input` answer, run before routing: a result refusing the input, or None."""
    value = await app.check_input(params, ctx)
    if value is None or isinstance(value, mcp_types.CallToolResult | ResponseBuilder | ErrorBuilder):
        return value
    raise TypeError(
        f"{app.cls.__name__}.{INPUT_CHECK} returned {type(value).__name__}, not a tool result or None. "
        "Fix: return tool_error(...) to refuse the input, or None to go on."
    )


def _opening_tool(app: AppDefinition, bridge: Bridge) -> Tool:
    suggestions = [Suggestion(action.tool, first_sentence(action.description)) for action in app.actions]
    if app.has_observer:
        suggestions.append(Suggestion(app.update_tool, first_sentence(update_description(app.name))))

    async def run(params: BaseModel | None, ctx: CallContext | None, reserved: dict[str, Any]) -> Any:
        refusal = await _refusal(app, params, ctx)
        if refusal is not None:
            return refusal
        caller = ctx.caller if ctx is not None else _NO_CALLER
        try:
            opened = await bridge.open(
                app.name, caller, view_id=_view_id(reserved), arguments=_arguments(params), ctx=ctx
            )
        except ViewError as error:
            return error.result()
        except Forwarded as answered:
            return answered.result  # reused on the worker holding its tab, which made the result
        view = opened.view
        url = bridge.url(view, ctx.base_url if ctx is not None else "")
        state = cast(OpenState, view.state.value)  # an opened view is always open
        data = OpenedView(app=app.name, view=view.handle, state=state, url=url, reused=opened.reused)
        builder = response(data.model_dump())
        if view.state is ViewState.PENDING:
            builder.llm_hint(f"Give the user this URL to open the view: {url}")
        builder.llm_hint(f'Pass _view="{view.handle}" to the {app.name} tools when several {app.name} views are open.')
        result = builder.suggest(suggestions).build()
        result.structured_content = data.model_dump()
        # For every client, whatever it declared: some hosts show MCP Apps without declaring the extension (apps.md
        # §13). The host hands the result to the shell, which frames the URL or boots the page with the ticket.
        meta = {"app": app.name, "view": view.handle, "url": url}
        if bridge.tabs.ticketer is not None:
            meta["ticket"] = await bridge.tabs.ticketer(view)
        result.meta = {VIEW_META: meta}
        return result

    tool = Tool(app.name, description=app.description, handler=_handler(app.input, run), input=app.input)
    tool = tool.with_meta({"ui": {"resourceUri": app.resource_uri}})
    return tool.reserve("_view", VIEW_PROPERTY).with_output_schema(OpenedView)


def _update_tool(app: AppDefinition, bridge: Bridge) -> Tool:
    tool_name = app.update_tool

    async def run(params: BaseModel | None, ctx: CallContext | None, reserved: dict[str, Any]) -> Any:
        refusal = await _refusal(app, params, ctx)
        if refusal is not None:
            return refusal
        fields = frozenset(params.model_fields_set) if params is not None else frozenset[str]()
        event = McpAppUpdateEvent(tool=tool_name, arguments=_arguments(params), fields_set=fields)

        async def observe(view: Any) -> Any:
            return await _maybe_await(view.on_mcp_app_update(event))

        return await _dispatch(bridge, app, tool_name, ctx, reserved, observe, has_presenter=False)

    tool = Tool(tool_name, description=update_description(app.name), handler=_handler(app.input, run), input=app.input)
    return tool.reserve("_view", VIEW_PROPERTY)


def _action_tool(
    app: AppDefinition,
    action: ActionDefinition,
    bridge: Bridge,
    select_keys: Sequence[str],
    outcomes: OutcomeStore | None,
) -> Tool:
    has_presenter = action.returns is not None

    async def run(params: BaseModel | None, ctx: CallContext | None, reserved: dict[str, Any]) -> Any:
        call_id = reserved.get("_call_id")
        if call_id is not None:
            ctx = dataclasses.replace(ctx or CallContext(_NO_CALLER, action.tool), call_id=str(call_id))
        outcome = ctx.outcome if ctx is not None else None
        if isinstance(outcome, Outcome):  # the handler's value becomes the result as below, then the tool's wrapping
            render = outcome.render

            def render_app_value(value: Any) -> mcp_types.CallToolResult:
                return render(app_result(action.tool, value, has_presenter=has_presenter))

            outcome.render = render_app_value

        async def act(view: Any) -> Any:
            method = app.bound_action(action, view)
            args = () if params is None else (params,)
            return await _maybe_await(method(*args, ctx=ctx) if action.takes_ctx else method(*args))

        return await _dispatch(bridge, app, action.tool, ctx, reserved, act, has_presenter=has_presenter)

    tool = Tool(
        action.tool,
        description=action.description,
        handler=_handler(action.params, run),
        input=action.params,
        returns=action.returns,
        result_view=action.result_view,
    )
    tool = tool.reserve("_view", VIEW_PROPERTY).reserve("_call_id", CALL_ID_PROPERTY)
    if outcomes is not None:
        tool = tool.keep_outcomes(outcomes)
    if action.output_model is not None:
        tool = tool.with_output_schema(action.output_model)
    if app.select and select_keys:
        tool = tool.enable_select(select_keys)
    return tool


async def _dispatch(
    bridge: Bridge,
    app: AppDefinition,
    tool: str,
    ctx: CallContext | None,
    reserved: dict[str, Any],
    handler: Callable[[Any], Awaitable[Any]],
    *,
    has_presenter: bool,
) -> Any:
    caller = ctx.caller if ctx is not None else _NO_CALLER
    present = ctx.present if ctx is not None else None
    # the call's result as the tool makes it, built while the tab applies the change
    finish: Callable[[Any], Any] | None = (
        None if present is None else lambda value: present(app_result(tool, value, has_presenter=has_presenter))
    )
    try:
        value = await bridge.call(app.name, caller, _view_id(reserved), handler, ctx=ctx, finish=finish)
    except ViewError as error:
        return error.result()
    except Forwarded as answered:
        return answered.result
    return app_result(tool, value, has_presenter=has_presenter)


def app_result(tool: str, value: Any, *, has_presenter: bool) -> Any:
    """apps.md §5: what an action or update handler's return value becomes (the tools layer does the rest)."""
    if isinstance(value, mcp_types.CallToolResult | ResponseBuilder | ErrorBuilder) or has_presenter:
        return value
    if value is None:
        return f"The '{tool}' action completed."
    if isinstance(value, BaseModel | dict):
        return success_structured(value)
    return value


def _select_keys(app: AppDefinition) -> list[str]:
    """The union of the top-level keys of all the app's action Presenters (the `_select` enum)."""
    keys: set[str] = set()
    for action in app.actions:
        if isinstance(action.returns, Presenter):
            keys.update(action.returns.schema_keys())
    return sorted(keys)


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value
