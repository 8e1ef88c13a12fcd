"""The tunnel's app-only tools (apps.md §13 "Tunnelled"): `webapp_tunnel_open` spends a view's boot ticket and
answers its page, `webapp_tunnel_http` carries the page's engine.io requests (and the parts of long answers),
`webapp_tunnel_close` ends the tunnel. Only a view's own frame calls them; the agent never needs to.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Self
from urllib.parse import urlsplit

import mcp_types
from pydantic import BaseModel, ConfigDict, Field, model_validator

from webapp.apps.naming import FRAMEWORK_TOOLS
from webapp.bridge.dispatch import Bridge
from webapp.bridge.registry import ViewRecord
from webapp.core.context import CallContext, Caller
from webapp.embed.answers import Answer
from webapp.embed.boot import DirectBoot
from webapp.embed.inline import VIRTUAL_ORIGIN, PageInliner
from webapp.embed.tickets import TicketStore
from webapp.embed.tunnel import DEFAULT_WAIT_MS, MAX_PAYLOAD, MAX_WAIT_MS, Refused, Tunnels, UnknownTunnel
from webapp.responses.builder import framework_error
from webapp.tools.registry import Tool
from webapp.tools.validation import ArgumentLimits

__all__ = ["Remote", "TunnelService"]

_APP_ONLY = {"ui": {"visibility": ["app"]}}
_ID = Field(default=None, min_length=1, max_length=64)
_SWEEP = 10.0  # seconds between looks for idle tunnels
_LIMITS = ArgumentLimits(max_string=2 * MAX_PAYLOAD)  # a body is checked in bytes against engine.io's own bound
Remote = Callable[[str, str, dict[str, Any], Caller], Awaitable[mcp_types.CallToolResult | None]]
"""`remote(worker, tool, arguments, caller)`: a tunnel's call answered by the worker holding it (None: it sent back
no result); ConnectionError when that worker cannot be reached now (Redis or the worker away for a moment)."""


class TunnelOpen(BaseModel):
    """`{ticket}`: spend the view's boot ticket; `{tunnel}`: render the page again (a reload inside the view)."""

    model_config = ConfigDict(extra="forbid")

    ticket: str | None = _ID
    tunnel: str | None = _ID

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.ticket is None) == (self.tunnel is None):
            raise ValueError("send either ticket (a new tunnel) or tunnel (the page again), not both or neither")
        return self


class TunnelHttp(BaseModel):
    """One request of the page's socket (`method`, `query`, `body`), a part of a long answer (`answer`, `part`), or
    the held GET resumed (`poll`)."""

    model_config = ConfigDict(extra="forbid")

    tunnel: str = Field(min_length=1, max_length=64)
    method: Literal["GET", "POST"] | None = None
    query: str | None = Field(default=None, max_length=4096)
    body: str | None = None
    wait_ms: int = Field(default=DEFAULT_WAIT_MS, ge=0, le=MAX_WAIT_MS)
    answer: int | None = Field(default=None, ge=1)
    part: int | None = Field(default=None, ge=0, le=10_000)
    poll: Literal[True] | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        if sum(value is not None for value in (self.method, self.part, self.poll)) != 1:
            raise ValueError("send exactly one of method (a request), part (a part of an answer) or poll: true")
        if self.method is None and (self.query is not None or self.body is not None):
            raise ValueError("query and body go with method only")
        if (self.part is None) != (self.answer is None):
            raise ValueError("part goes with answer: the id of the answer it is a part of")
        return self


class TunnelClose(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tunnel: str = Field(min_length=1, max_length=64)


class TunnelService:
    """The tunnel tools of a server, over its bridges (views are found by their handle in any of them)."""

    def __init__(
        self,
        tunnels: Tunnels,
        tickets: TicketStore,
        boot: DirectBoot,
        inliner: PageInliner,
        base_url: Callable[[], str],
    ) -> None:
        self.tunnels = tunnels
        self.bridges: list[Bridge] = []
        self._tickets = tickets
        self._boot = boot
        self._inliner = inliner
        self._base_url = base_url
        self._sweeper: asyncio.Task[None] | None = None
        self.remote: Remote | None = None  # with several workers (`join`)

    def join(self, worker: str, remote: Remote) -> None:
        """This server is `worker` among several (`webapp.cluster`): its tunnels go into the shared directory, and
        `remote` passes a call of a tunnel held by another worker to that worker."""
        self.tunnels.worker = worker
        self.remote = remote

    def tools(self) -> list[Tool]:
        open_name, http_name, close_name = FRAMEWORK_TOOLS
        opening = Tool(
            open_name,
            description="Opens the tunnel of a live view whose frame cannot reach the server (the view's own call).",
            handler=self._open,
            input=TunnelOpen,
        )
        http = Tool(
            http_name,
            description="Carries one request of a tunnelled live view's socket (the view's own call).",
            handler=self._http,
            input=TunnelHttp,
        )
        closing = Tool(
            close_name,
            description="Closes the tunnel of a live view (the view's own call).",
            handler=self._close,
            input=TunnelClose,
        )
        return [tool.with_meta(_APP_ONLY).with_limits(_LIMITS) for tool in (opening, http, closing)]

    # -- the tools -----------------------------------------------------------------------------------------------

    async def _open(self, params: TunnelOpen, *, ctx: CallContext) -> mcp_types.CallToolResult:
        if params.tunnel is not None and (passed := await self._passed_on(params.tunnel, ctx)) is not None:
            return passed
        return await _answered(self._opened(params, ctx.caller))

    async def _opened(self, params: TunnelOpen, caller: Caller) -> mcp_types.CallToolResult:
        if params.ticket is not None:
            view = await self._redeemed(params.ticket, caller)
            tunnel_id, tunnel = await self.tunnels.mint(view.handle, caller.principal, caller.session_id)
        else:
            tunnel_id = params.tunnel or ""
            tunnel = self.tunnels.find(tunnel_id, caller.principal, caller.session_id)
            view = await self._view(tunnel.view)
            if view is None:
                await self.tunnels.close(tunnel)
                raise UnknownTunnel
            await self.tunnels.detach(tunnel)
        host = urlsplit(self._base_url()).netloc
        rendered = await self._boot.render(view, host, prefix=VIRTUAL_ORIGIN, origin=VIRTUAL_ORIGIN, tunnel=tunnel_id)
        if rendered is None:
            await self.tunnels.close(tunnel)
            raise Refused("The view's page could not be rendered; open the view again.")
        self.tunnels.bind_client(tunnel, rendered.client_id)
        page = await self._inliner.inline(rendered.html)
        return _result(self.tunnels.answer(tunnel, 200, page), tunnel=tunnel_id)

    async def _http(self, params: TunnelHttp, *, ctx: CallContext) -> mcp_types.CallToolResult:
        if (passed := await self._passed_on(params.tunnel, ctx)) is not None:
            return passed
        return await _answered(self._passed(params, ctx.caller))

    async def _passed(self, params: TunnelHttp, caller: Caller) -> mcp_types.CallToolResult:
        tunnel = self.tunnels.find(params.tunnel, caller.principal, caller.session_id)
        if params.part is not None and params.answer is not None:
            return _result(self.tunnels.part(tunnel, params.answer, params.part))
        if params.poll:
            return _result(await self.tunnels.resume(tunnel, params.wait_ms))
        method = params.method or "GET"
        return _result(
            await self.tunnels.request(tunnel, method, params.query or "", params.body or "", params.wait_ms)
        )

    async def _close(self, params: TunnelClose, *, ctx: CallContext) -> mcp_types.CallToolResult:
        if (passed := await self._passed_on(params.tunnel, ctx)) is not None:
            return passed
        return await _answered(self._closed(params, ctx.caller))

    async def _passed_on(self, tunnel_id: str, ctx: CallContext) -> mcp_types.CallToolResult | None:
        """The result of the worker holding `tunnel_id` when that is another one (a call passed on once: never again),
        TUNNEL_UNAVAILABLE when that worker cannot be reached now (the frame retries), TUNNEL_UNKNOWN when it sent
        back nothing; None when this worker answers."""
        remote = self.remote
        if remote is None or ctx.target is not None or (worker := await self.tunnels.elsewhere(tunnel_id)) is None:
            return None
        try:
            result = await remote(worker, ctx.tool, dict(ctx.arguments or {}), ctx.caller)
        except ConnectionError:
            return framework_error("TUNNEL_UNAVAILABLE")
        return result if result is not None else _unknown()

    async def _closed(self, params: TunnelClose, caller: Caller) -> mcp_types.CallToolResult:
        await self.tunnels.close(self.tunnels.find(params.tunnel, caller.principal, caller.session_id))
        return mcp_types.CallToolResult(content=[_text("The tunnel is closed.")], structured_content={})

    # -- views -----------------------------------------------------------------------------------------------------

    async def _redeemed(self, ticket: str, caller: Caller) -> ViewRecord:
        redeemed = await self._tickets.redeem(ticket)
        view = await self._view(redeemed.view) if redeemed.outcome == "ok" and redeemed.view else None
        if view is None or not view.is_open or redeemed.principal != caller.principal:
            raise UnknownTunnel
        if view.principal != caller.principal:
            raise UnknownTunnel
        return view

    async def _view(self, handle: str) -> ViewRecord | None:
        for bridge in self.bridges:
            if (view := await bridge.registry.lookup(handle)) is not None:
                return view
        return None

    # -- life cycle ------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep(), name="tunnel-sweeper")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.tunnels.close_all()

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(_SWEEP)
            await self.tunnels.sweep()


async def _answered(work: Awaitable[mcp_types.CallToolResult]) -> mcp_types.CallToolResult:
    """The tool's result, or the error envelope of a tunnel's refusal."""
    try:
        return await work
    except UnknownTunnel:
        return _unknown()
    except Refused as refused:
        return framework_error("TUNNEL_REFUSED", reason=refused)


def _unknown() -> mcp_types.CallToolResult:
    """TUNNEL_UNKNOWN: one text whatever the cause (no oracle)."""
    return framework_error("TUNNEL_UNKNOWN")


def _text(text: str) -> mcp_types.TextContent:
    return mcp_types.TextContent(type="text", text=text)


def _result(answer: Answer, **extra: str) -> mcp_types.CallToolResult:
    data: dict[str, Any] = {**extra, "status": answer.status, "body": answer.body, "parts": answer.parts}
    if answer.id:
        data["answer"] = answer.id
    if answer.pending:
        data["pending"] = True
    return mcp_types.CallToolResult(content=[_text("Tunnel data for the view's frame.")], structured_content=data)
