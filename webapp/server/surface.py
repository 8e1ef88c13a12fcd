"""The MCP server of a `WebApp`: the SDK's low-level `Server` with a handler for every part of the surface an author
declares (tools, prompts, resources and templates, completion, logging, subscriptions), in both protocol eras."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

import mcp_types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

from webapp.core.context import NO_CLIENT, CallContext, Caller, ClientChannel
from webapp.server.asking import answer_rounds, request_state_boundary
from webapp.server.changes import ChangeBus
from webapp.server.client_logs import LogLevels
from webapp.server.subscriptions import Subscriptions
from webapp.tools.prompts import PromptError, PromptRegistry, complete_with
from webapp.tools.registry import ToolLike
from webapp.tools.resources import ResourceNotFound, ResourceRegistry

__all__ = ["ResourceSource", "Served", "build_mcp_server", "not_found"]

log = logging.getLogger(__name__)
Context = ServerRequestContext[Any, Any]


class ResourceSource(Protocol):
    """Resources a layer above adds to the server (`webapp.embed`'s `ui://` shells), with the extensions they need."""

    extensions: Mapping[str, dict[str, Any]]

    def resources(self) -> Sequence[mcp_types.Resource]: ...
    def read(self, uri: str) -> mcp_types.ReadResourceResult | None: ...


class _Tools(Protocol):
    def tools(self) -> Sequence[ToolLike]: ...


class Served(Protocol):
    """What the MCP server serves (a `WebApp`)."""

    @property
    def registry(self) -> _Tools: ...
    @property
    def resource_sources(self) -> Sequence[ResourceSource]: ...
    @property
    def prompts(self) -> PromptRegistry: ...
    @property
    def resources(self) -> ResourceRegistry: ...
    @property
    def log_levels(self) -> LogLevels: ...
    @property
    def subscriptions(self) -> Subscriptions: ...
    @property
    def changes(self) -> ChangeBus: ...
    @property
    def base_url(self) -> str: ...
    @property
    def request_state_key(self) -> str | None: ...
    def caller_of(self, ctx: Context, transport: str) -> Caller: ...
    async def call_mcp_tool(
        self, ctx: Context, params: mcp_types.CallToolRequestParams, transport: str
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult: ...


def not_found(uri: str) -> MCPError:
    """`resources/read` (or subscribe) of a URI that names nothing, or nothing this caller may read."""
    return MCPError(INVALID_PARAMS, f"No resource has the URI {uri!r}.", data={"uri": uri})


def build_mcp_server(webapp: Served, transport: Literal["http", "stdio"]) -> Server[Any]:
    """A low-level MCP server serving `webapp`'s tools, prompts and resources, and telling who listens of their
    changes (both protocol eras stay on)."""

    def context(ctx: Context, name: str, client: ClientChannel = NO_CLIENT) -> CallContext:
        """The context handed to a prompt, resource or completion function (as to a tool)."""
        caller = webapp.caller_of(ctx, transport)
        send_log = webapp.log_levels.sender(ctx, caller.session_id)
        return CallContext(caller=caller, tool=name, base_url=webapp.base_url, send_log=send_log, client=client)

    async def list_tools(ctx: Context, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[_mcp_tool(tool) for tool in webapp.registry.tools()])

    async def call_tool(
        ctx: Context, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        return await webapp.call_mcp_tool(ctx, params, transport)

    async def list_prompts(
        ctx: Context, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListPromptsResult:
        return mcp_types.ListPromptsResult(prompts=[prompt.to_mcp() for prompt in webapp.prompts.prompts()])

    async def get_prompt(
        ctx: Context, params: mcp_types.GetPromptRequestParams
    ) -> mcp_types.GetPromptResult | mcp_types.InputRequiredResult:
        async def render(client: ClientChannel) -> mcp_types.GetPromptResult:
            return await webapp.prompts.render(params.name, params.arguments, context(ctx, params.name, client))

        try:
            return await answer_rounds(ctx, params, render)
        except MCPError:
            raise
        except PromptError as error:
            raise MCPError(INVALID_PARAMS, str(error)) from None
        except Exception:
            log.exception("prompt %r failed", params.name)
            raise MCPError(INTERNAL_ERROR, f"The prompt {params.name!r} failed; the server's log says why.") from None

    async def list_resources(
        ctx: Context, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourcesResult:
        listed = await webapp.resources.resources(context(ctx, "resources/list"))
        listed += [resource for source in webapp.resource_sources for resource in source.resources()]
        return mcp_types.ListResourcesResult(resources=listed)

    async def list_templates(
        ctx: Context, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListResourceTemplatesResult:
        return mcp_types.ListResourceTemplatesResult(resource_templates=webapp.resources.templates())

    async def read_resource(
        ctx: Context, params: mcp_types.ReadResourceRequestParams
    ) -> mcp_types.ReadResourceResult | mcp_types.InputRequiredResult:
        uri = params.uri
        for source in webapp.resource_sources:
            if (found := source.read(uri)) is not None:
                return found
        match = webapp.resources.find(uri)
        if match is None:
            raise not_found(uri)
        resource, variables = match

        async def read(client: ClientChannel) -> mcp_types.ReadResourceResult:
            return await resource.read(uri, variables, context(ctx, uri, client))

        try:
            return await answer_rounds(ctx, params, read)
        except MCPError:
            raise
        except ResourceNotFound:
            raise not_found(uri) from None
        except Exception:
            log.exception("resource %r failed", resource.uri)
            raise MCPError(INTERNAL_ERROR, "Reading the resource failed; the server's log says why.") from None

    async def complete(ctx: Context, params: mcp_types.CompleteRequestParams) -> mcp_types.CompleteResult:
        ref, argument = params.ref, params.argument
        given = dict(params.context.arguments or {}) if params.context is not None else {}
        if isinstance(ref, mcp_types.PromptReference):
            prompt = webapp.prompts.get(ref.name)
            completer = prompt.completers.get(argument.name) if prompt is not None else None
        else:
            resource = webapp.resources.by_template(ref.uri)
            completer = resource.completers.get(argument.name) if resource is not None else None
        return mcp_types.CompleteResult(completion=await complete_with(completer, argument.value, given))

    async def set_level(ctx: Context, params: mcp_types.SetLevelRequestParams) -> mcp_types.EmptyResult:
        session_id = webapp.caller_of(ctx, transport).session_id
        if session_id is not None:
            webapp.log_levels.set(session_id, params.level)
        return mcp_types.EmptyResult()

    async def subscribe(ctx: Context, params: mcp_types.SubscribeRequestParams) -> mcp_types.EmptyResult:
        session_id = webapp.caller_of(ctx, transport).session_id
        if not await readable(ctx, params.uri):  # one of a template's: subscribed only by who may read it
            raise not_found(params.uri)
        if session_id is not None:
            webapp.changes.follow()  # the changes made on any worker reach this one from now on
            webapp.subscriptions.add(params.uri, session_id, ctx.session)
        return mcp_types.EmptyResult()

    async def unsubscribe(ctx: Context, params: mcp_types.UnsubscribeRequestParams) -> mcp_types.EmptyResult:
        session_id = webapp.caller_of(ctx, transport).session_id
        if session_id is not None:
            webapp.subscriptions.remove(params.uri, session_id)
        return mcp_types.EmptyResult()

    async def readable(ctx: Context, uri: str) -> bool:
        """Whether this caller may hear of `uri`'s changes: an author's resource, or one of a template's that it may
        read (read quietly: nothing goes to the client before the listen stream's acknowledgment)."""
        match = webapp.resources.find(uri)
        if match is None:
            return False
        resource, variables = match
        if resource.template is None:
            return True
        quiet = CallContext(caller=webapp.caller_of(ctx, transport), tool=uri, base_url=webapp.base_url)
        try:
            await resource.read(uri, variables, quiet)
        except Exception:  # not found, not this caller's, or failing: not listened for
            return False
        return True

    async def listen(
        ctx: Context, params: mcp_types.SubscriptionsListenRequestParams
    ) -> mcp_types.SubscriptionsListenResult:
        if webapp.changes.closed:
            raise MCPError(INTERNAL_ERROR, "The server is stopping; listen again (another worker will answer).")
        wanted = params.notifications
        uris = [uri for uri in wanted.resource_subscriptions or () if await readable(ctx, uri)]
        honoured = wanted.model_copy(update={"resource_subscriptions": uris or None})  # the ack shows what is heard
        with webapp.changes.streaming(uris):
            return await listener(ctx, params.model_copy(update={"notifications": honoured}))

    listener = webapp.changes.handler()

    def input_schema(name: str) -> dict[str, Any] | None:
        # lets the SDK check `Mcp-Param-*` headers of sessionless calls without listing every tool per call
        return next((tool.input_schema for tool in webapp.registry.tools() if tool.name == name), None)

    server = Server(
        "webapp",
        version=_version(),
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_completion=complete,
        on_subscriptions_listen=listen,  # 2026 only: the SDK answers it as unknown on the 2025 wire
    )
    # registered here, not as constructor arguments: the constructor's slot for it is deprecated (the 2026 era drops
    # the method; the SDK answers it there as unknown)
    # the request state of calls that ask their client (2026): sealed on the way out, checked on the way in
    server.middleware.append(request_state_boundary(webapp.request_state_key, server.name))
    server.add_request_handler("logging/setLevel", mcp_types.SetLevelRequestParams, set_level)
    server.add_request_handler("resources/subscribe", mcp_types.SubscribeRequestParams, subscribe)
    server.add_request_handler("resources/unsubscribe", mcp_types.UnsubscribeRequestParams, unsubscribe)
    for source in webapp.resource_sources:
        server.extensions.update(source.extensions)
    return server


def _mcp_tool(tool: ToolLike) -> mcp_types.Tool:
    meta: dict[str, Any] | None = getattr(tool, "meta", None)
    return mcp_types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=tool.annotations,
        icons=tool.icons,
        _meta=meta,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("webapp")
    except PackageNotFoundError:
        return "0"
