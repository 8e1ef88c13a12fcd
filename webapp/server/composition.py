"""The server: settings, tool registry, call log and the MCP servers that list and call the tools (`webapp.hosting`
serves them in NiceGUI's app and on stdio).

An app factory (`--app module:attribute`) is a callable `build(webapp: WebApp) -> None`: it adds tools with
`webapp.add_tool(tool)`, registers NiceGUI pages with `@ui.page(route)`, and may use `webapp.settings`,
`webapp.calllog`, `webapp.events`, `webapp.on_startup/on_shutdown/on_session_end` and `webapp.open_in_browser(url)`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import time
import webbrowser
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

import mcp_types
from mcp.server import Server
from mcp.server.apps import client_supports_apps
from mcp.server.context import ServerRequestContext

from webapp.auth import Issuer
from webapp.bridge.dispatch import Bridge
from webapp.bridge.view_resources import ViewResources
from webapp.calllog.memory import CallLog
from webapp.calllog.outcome import cancelled_result
from webapp.cluster import Node, worker_id
from webapp.core.auth import PRINCIPAL_SCOPE_KEY
from webapp.core.context import (
    NO_CLIENT,
    STDIO,
    CallContext,
    Caller,
    ClientChannel,
    InputRequired,
    LogSender,
    MissingCapability,
    no_log,
    no_progress,
)
from webapp.core.security import NullOriginRule
from webapp.core.settings import Settings
from webapp.core.sql import Database, open_database
from webapp.embed import ResultWidget, TunnelService, install_embedding
from webapp.events import AppEvents
from webapp.responses.builder import framework_error
from webapp.server.asking import answer_rounds
from webapp.server.declarations import Declarations
from webapp.server.drain import Drain, refused_result, stopped_result
from webapp.server.lag import LoopLag
from webapp.server.logs import log_call
from webapp.server.mcp_adapter import legacy_session_id, on_connection_closed
from webapp.server.metrics import Metrics
from webapp.server.readiness import DatabaseCheck, Readiness
from webapp.server.surface import ResourceSource, build_mcp_server
from webapp.tools.registry import ToolLike, ToolRegistry, app_only

__all__ = [
    "Registry",
    "ResourceSource",
    "WebApp",
    "default_registry",
    "internal_error",
]

log = logging.getLogger(__name__)
Hook = Callable[[], Awaitable[None] | None]
SessionHook = Callable[[str], Awaitable[None] | None]


class Registry(Protocol):
    """What the server needs of the tool registry (`webapp.tools.ToolRegistry`)."""

    def add(self, tool: Any, /) -> object: ...
    def get(self, name: str, /) -> ToolLike | None: ...
    def tools(self) -> Sequence[ToolLike]: ...
    async def call(
        self, name: str, arguments: dict[str, Any] | None, ctx: CallContext | None = None
    ) -> mcp_types.CallToolResult: ...


def internal_error(tool: str, error: BaseException) -> mcp_types.CallToolResult:
    """The INTERNAL_ERROR envelope (wire-format §5) for an exception that escaped the registry."""
    return framework_error("INTERNAL_ERROR", label=tool, error=error)


async def _run_hook(hook: Callable[..., Awaitable[None] | None], *args: Any) -> None:
    try:
        result = hook(*args)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("hook %r failed", hook)


def default_registry() -> Registry:
    """The framework's tool registry."""
    return ToolRegistry()


class WebApp(Declarations):
    """The server: settings, tool registry, call log, the MCP servers and their hosting in NiceGUI's app."""

    def __init__(self, settings: Settings, registry: Registry | None = None, *, calllog: CallLog | None = None) -> None:
        if settings.redis_url and not settings.worker_id:  # made once: the call log and the cluster name it alike
            settings = settings.model_copy(update={"worker_id": worker_id(settings)})
        super().__init__(AppEvents(coalesce=settings.view_coalesce))
        self.settings = settings
        self.registry = registry if registry is not None else default_registry()
        self.calllog = calllog or CallLog(settings.call_log_size, settings.call_log_feed_size)
        if settings.redis_url:
            self.calllog.worker = settings.worker_id or ""  # its records are this worker's among several
        self.port = settings.port
        """The real serving port (known once the socket is bound; see `bind_port`)."""
        self.issuer: tuple[Issuer, dict[str, Any]] | None = None
        """With `--auth-issuer`: the issuer's metadata and keys, read once at start (`webapp.auth.discover`)."""
        self.resource_sources: list[ResourceSource] = []
        self.null_origin_rules: list[NullOriginRule] = []
        """Which `Origin: null` requests the Host/Origin guard lets through (embedded view pages, `webapp.embed`)."""
        self.mcp = self.build_mcp_server("http")
        self.result_widget = ResultWidget(self.registry.tools, lambda: self.base_url, domain=settings.ui_domain)
        """`ui://webapp/result`, listed once a tool links it (tools with a Presenter do)."""
        self.add_resources(self.result_widget)
        self.drain = Drain(settings.drain_timeout, on_begin=self.changes.close)
        """The calls in flight; a stopping server takes no new ones and ends its listen streams (`server.drain`)."""
        self.tunnel: TunnelService | None = None
        """The tools that carry tunnelled views (`webapp.embed`), once an app is installed."""
        self._database: Database | None = None
        self.view_resources: ViewResources | None = None
        """`webapp://views/{view}`, once an app is installed."""
        self.bridges: list[Bridge] = []
        """The bridges of the apps installed (`install_apps`); with `--redis-url` they reach other workers."""
        self.node: Node | None = None
        """With `--redis-url`: this worker among several (`webapp.cluster.install_cluster`)."""
        self.boots: Counter[str] = Counter()
        """Direct boots of view pages by outcome (`webapp.embed`), for the metrics."""
        self.readiness = Readiness(DatabaseCheck(settings.db), lambda: self.drain.draining, self._redis_up)
        """`/readyz`: the database answers and the worker is not draining (`webapp.server.readiness`)."""
        self.loop_lag = LoopLag()
        """How late the event loop runs a timer (`webapp_loop_lag_seconds`, `webapp.server.lag`)."""
        self.metrics = Metrics(self, lambda name: self.registry.get(name) is not None)
        """`/metrics`: this server's Prometheus metrics (`webapp.server.metrics`)."""
        self._startup: list[Hook] = [self.loop_lag.start]
        self._shutdown: list[Hook] = [self.readiness.database.close, self.loop_lag.stop]
        self._session_end: list[SessionHook] = [  # an ended session's id grants nothing, and is told nothing
            self.calllog.discard_secret,
            self.log_levels.forget,
            self.subscriptions.forget,
        ]
        for principal_token in settings.tokens:
            self.calllog.add_secret(principal_token)
        self.calllog.add_secret(settings.request_state_key)

    # -- hooks for apps and the bridge ---------------------------------------------------------------------------
    def add_tool(self, tool: Any) -> None:
        """Serve `tool` (a `webapp.Tool`) beside the apps' tools."""
        self.registry.add(tool)

    def add_resources(self, source: ResourceSource) -> None:
        """List and serve `source`'s resources (and advertise its extensions) on every MCP transport."""
        self.resource_sources.append(source)
        self.mcp.extensions.update(source.extensions)

    def apps_installed(self, bridge: Bridge) -> None:
        """Called by `install_apps` with the bridge of the apps just added: shows their views inline in MCP Apps
        hosts (`webapp.embed`), lets them reach other workers (`webapp.cluster`, with `--redis-url`), and serves
        every view as the resource `webapp://views/{view}`."""
        self.bridges.append(bridge)
        views = self.view_resources
        if views is None:
            views = self.view_resources = ViewResources(self, self.changes.resource_updated, self._apps_database)
            self.resources.add(views.resource())
        bridge.registry.on_data_changed = views.changed
        install_embedding(self, bridge)

    def _apps_database(self) -> Database:
        """The server's database as the apps' `resource(data, db)` read it: opened on first use, closed at stop."""
        if self._database is None:
            self._database = open_database(self.settings.db)
            self._shutdown.append(self._database.close)
        return self._database

    def on_startup(self, hook: Hook) -> Hook:
        """Run `hook()` once the server is up (MCP session manager and NiceGUI started)."""
        self._startup.append(hook)
        return hook

    def on_shutdown(self, hook: Hook) -> Hook:
        """Run `hook` (sync or async) when the server stops; usable as a decorator."""
        self._shutdown.append(hook)
        return hook

    def on_session_end(self, hook: SessionHook) -> SessionHook:
        """Run `hook(session_id)` when a legacy MCP session that called a tool ends (DELETE, idle timeout)."""
        self._session_end.append(hook)
        return hook

    @property
    def request_state_key(self) -> str | None:
        """The secret sealing the request state of calls that ask their client (`--request-state-key`; None: the
        MCP server makes one of its own)."""
        return self.settings.request_state_key

    @property
    def base_url(self) -> str:
        """The URL prefix of view links: `--base-url`, else the serving host and real port."""
        if self.settings.base_url:
            return self.settings.base_url
        host = self.settings.host
        if host in ("0.0.0.0", ""):
            host = "127.0.0.1"
        elif host == "::":
            host = "::1"
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def url(self, path: str) -> str:
        """The absolute URL of `path` on this server (`--base-url` when set)."""
        return self.base_url + path

    def open_in_browser(self, url: str) -> bool:
        """With `--open-browser`, open `url` in the local browser (in the background); returns whether it did."""
        if not self.settings.open_browser:
            return False
        threading.Thread(target=webbrowser.open, args=(url,), daemon=True, name="open-browser").start()
        return True

    # -- MCP ----------------------------------------------------------------------------------------------------
    def build_mcp_server(self, transport: Literal["http", "stdio"]) -> Server[Any]:
        """A low-level MCP server serving this app's tools, prompts and resources (`webapp.server.surface`)."""
        return build_mcp_server(self, transport)

    async def call_mcp_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams, transport: str
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """`tools/call`: `call_tool` with the MCP request's caller, progress, log level and client to ask (a call
        that asks runs again with the answers, `webapp.server.asking`)."""
        try:
            caller = self.caller_of(ctx, transport)
        except Exception as error:  # never a JSON-RPC error (an SDK change shows up here)
            log.exception("could not identify the caller of %r", params.name)
            return internal_error(params.name, error)

        async def report_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
            try:
                await ctx.session.report_progress(progress, total, message)
            except Exception:
                log.debug("progress for %r not delivered", params.name, exc_info=True)

        # progress only for a caller that asked for it with a token (the SDK would drop it, after our work)
        progress = report_progress if (params.meta or {}).get("progress_token") is not None else None
        send_log = self.log_levels.sender(ctx, caller.session_id)

        async def run(client: ClientChannel) -> mcp_types.CallToolResult:
            return await self.call_tool(params.name, params.arguments, caller, progress, send_log, client=client)

        return await answer_rounds(ctx, params, run)

    def caller_of(self, ctx: ServerRequestContext[Any, Any], transport: str) -> Caller:
        """Who sends this MCP request (its session's end runs the `on_session_end` hooks)."""
        if transport == STDIO:
            return Caller(principal=None, session_id=STDIO, protocol=STDIO, apps=client_supports_apps(ctx))
        session_id = legacy_session_id(ctx)
        if session_id is not None and self._session_end:
            on_connection_closed(ctx, lambda: self._session_ended(session_id))
        scope: Mapping[str, Any] = getattr(ctx.request, "scope", None) or {}
        principal = scope.get(PRINCIPAL_SCOPE_KEY)
        return Caller(
            principal=principal if isinstance(principal, str) else None,
            session_id=session_id,
            protocol=ctx.protocol_version,
            apps=client_supports_apps(ctx),
        )

    async def _session_ended(self, session_id: str) -> None:
        for hook in list(self._session_end):
            await _run_hook(hook, session_id)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        caller: Caller,
        report_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
        send_log: LogSender = no_log,
        *,
        client: ClientChannel = NO_CLIENT,
    ) -> mcp_types.CallToolResult:
        """Call a tool through the registry and record it in the call log. Never raises, except cancellation and
        the asking signals of `client` (`InputRequired`, `MissingCapability`: a round that asks, or a capability the
        client lacks, is not recorded; `call_mcp_tool` answers them).

        While the server stops, a new call is refused and one still running after the grace time is ended, both
        with SERVER_STOPPING (recorded like any other result)."""
        progress = report_progress or no_progress
        ctx = CallContext(
            caller=caller,
            tool=name,
            report_progress=progress,
            base_url=self.base_url,
            arguments=arguments,
            send_log=send_log,
            client=client,
        )
        started = time.perf_counter()
        if self.drain.draining:
            result = refused_result(name)
            self._record(name, arguments, result, caller, started)
            return result
        deadline: asyncio.Timeout | None = None
        try:
            async with self.drain.call() as deadline:
                result = await self.registry.call(name, arguments, ctx)
        except TimeoutError as error:
            if deadline is None or not deadline.expired():
                log.exception("tool %r raised", name)
                result = internal_error(name, error)
            else:
                result = stopped_result(name, self.drain.grace)
        except asyncio.CancelledError:
            self._record(name, arguments, cancelled_result(), caller, started)
            raise
        except (InputRequired, MissingCapability) as asking:
            if client is not NO_CLIENT:  # the MCP request answers it (call_mcp_tool)
                log.info("tool %r: %s", name, asking)
                raise
            result = framework_error("MISSING_CAPABILITY", tool=name)
        except Exception as error:
            log.exception("tool %r raised", name)
            result = internal_error(name, error)
        self._record(name, arguments, result, caller, started)
        return result

    def _record(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        result: mcp_types.CallToolResult,
        caller: Caller,
        started: float,
    ) -> None:
        plumbing = self.is_plumbing(name)
        duration = time.perf_counter() - started
        try:
            self.metrics.call_finished(name, result, duration, plumbing=plumbing)
        except Exception:
            log.exception("could not count the call of %r", name)
        worker, calllog = self.settings.worker_id, self.calllog
        if plumbing:  # a view's own call (its tunnel), not an agent's: its line only at debug level
            log_call(name, result, duration=duration, arguments=arguments, worker=worker, level=logging.DEBUG)
            return
        view: str | None = None
        try:
            record = calllog.record(tool=name, arguments=arguments, result=result, caller=caller, duration=duration)
            view = record.view  # masked: the handle's first characters
        except Exception:
            log.exception("could not record the call of %r", name)
        log_call(name, result, duration=duration, arguments=arguments, worker=worker, view=view)

    def _redis_up(self) -> bool | None:
        return None if self.node is None else self.node.inbox.subscribed

    def is_plumbing(self, name: str) -> bool:
        """Whether `name` is an app-only tool: a view's plumbing, kept out of the call log and of the app events'
        holds."""
        tool = self.registry.get(name)
        return tool is not None and app_only(tool)

    async def started(self) -> None:
        """Run the startup hooks (the host calls this once MCP and NiceGUI are up)."""
        for hook in list(self._startup):
            await _run_hook(hook)

    async def stopping(self) -> None:
        for hook in list(self._shutdown):
            await _run_hook(hook)
