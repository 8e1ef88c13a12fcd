"""Hosting a `WebApp`: MCP at the exact route `/mcp` in NiceGUI's app with Host/Origin and bearer-token guards, the
session manager held in NiceGUI's lifespan, MCP on stdin/stdout, and serving on a real port (0 = any free port).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import sys
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, cast

import anyio
from fastapi import FastAPI
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from sse_starlette.sse import AppStatus
from starlette.routing import Route

from webapp.auth import PageSignIn, People, ResourceServer, discover, resource_server
from webapp.core.auth import BearerAuth
from webapp.core.security import HostOriginGuard, HostPolicy, NullOriginGrant, NullOriginRule
from webapp.core.settings import allowed_hosts, allowed_origins
from webapp.server.banner import Banner
from webapp.server.calls_first import CallsFirst
from webapp.server.composition import WebApp
from webapp.server.heap import HeapKeeper
from webapp.server.logs import JsonLogFormatter
from webapp.server.ops import METRICS_PATH, PROBE_PATHS, OpsPort, OpsRoutes, metrics_on_serving_port, reserve_port
from webapp.server.stylesheet import install_stylesheet

__all__ = ["MCP_PATH", "StdioWire", "claim_stdio", "host_policy", "install", "reserve_port", "serve"]

MCP_PATH = "/mcp"
_STARTUP_TIMEOUT = 10.0
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StdioWire:
    """Private duplicates of the process's original stdin and stdout, reserved for MCP's JSON-RPC."""

    stdin_fd: int
    stdout_fd: int


def claim_stdio() -> StdioWire:
    """Take stdin/stdout for MCP now: afterwards fd 0 reads /dev/null and fd 1 writes to stderr, so no banner, log
    line or stray print can reach the JSON-RPC stream."""
    wire = StdioWire(os.dup(0), os.dup(1))
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return wire


def host_policy(webapp: WebApp) -> HostPolicy:
    """The Host/Origin allow-lists of every route, on the real serving port."""
    settings, port = webapp.settings, webapp.port
    return HostPolicy.of(allowed_hosts(settings, port), allowed_origins(settings, port))


def _transport_security(webapp: WebApp) -> TransportSecuritySettings:
    settings, port = webapp.settings, webapp.port
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts(settings, port),
        allowed_origins=allowed_origins(settings, port),
    )


def install(webapp: WebApp, app: FastAPI, *, stdio: StdioWire | None = None, drain_early: bool = False) -> None:
    """Serve `webapp` from NiceGUI's `app`: the `/mcp` route, the guards, and a lifespan that runs MCP (and stdio)
    and drains the calls in flight before the shutdown hooks close the stores; with `drain_early` (`serve`) the
    drain starts with the stop (SIGTERM, SIGINT, stdin closed) and ends the SSE streams only when it is done.

    The guards and the lifespan wrapper are added once per app; a later `install` (tests) replaces the route and
    the current WebApp, but keeps the first token table.
    """
    manager = StreamableHTTPSessionManager(
        app=webapp.mcp,
        security_settings=_transport_security(webapp),
        session_idle_timeout=webapp.settings.session_idle_timeout,
        max_request_body_size=webapp.settings.max_request_body,
    )
    app.state.webapp = webapp
    app.state.webapp_session_manager = manager
    app.state.webapp_stdio = stdio
    app.state.webapp_drain_early = drain_early
    app.state.webapp_host_policy = host_policy(webapp)
    app.state.webapp_null_origin_rules = webapp.null_origin_rules
    guard = _resource_server(webapp)
    app.state.webapp_resource_server = guard
    app.state.webapp_people = _people(webapp, guard) if guard else None
    ours = {MCP_PATH, *(route.path for route in guard.routes())} if guard else {MCP_PATH}
    routes = app.router.routes
    routes[:] = [route for route in routes if not (isinstance(route, Route) and route.path in ours)]
    endpoint = CallsFirst(StreamableHTTPASGIApp(manager), webapp.events, webapp.is_plumbing)
    routes[0:0] = [Route(MCP_PATH, endpoint=endpoint), *(guard.routes() if guard else [])]
    install_stylesheet(app)
    if getattr(app.state, "webapp_installed", False):
        return
    app.state.webapp_installed = True
    settings = webapp.settings

    async def authenticate(scope: Any, receive: Any, send: Any, presented: bytes | None) -> Any:
        current: ResourceServer = app.state.webapp_resource_server
        return await current.authenticate(scope, receive, send, presented)

    app.add_middleware(
        BearerAuth,
        tokens=settings.tokens,
        path=MCP_PATH,
        session_idle_timeout=settings.session_idle_timeout,
        authenticate=authenticate if guard else None,
    )
    app.add_middleware(PageSignIn, people=lambda: cast(People | None, app.state.webapp_people))

    def installed() -> WebApp:
        return cast(WebApp, app.state.webapp)

    # a middleware added later wraps the ones before: /metrics behind the Host/Origin guard, ahead of sign-in
    app.add_middleware(OpsRoutes, source=installed, paths=frozenset({METRICS_PATH}))

    async def null_origin(scope: Any) -> NullOriginGrant | None:
        rules: list[NullOriginRule] = app.state.webapp_null_origin_rules
        for rule in rules:
            if (grant := await rule(scope)) is not None:
                return grant
        return None

    app.add_middleware(
        HostOriginGuard, policy=lambda: cast(HostPolicy, app.state.webapp_host_policy), null_origin=null_origin
    )
    app.add_middleware(OpsRoutes, source=installed, paths=PROBE_PATHS)  # outermost: the probes answer any Host
    nicegui_lifespan = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncGenerator[Any]:
        state = asgi_app.state
        current: WebApp = state.webapp
        async with _running(current, state.webapp_session_manager, state.webapp_stdio), nicegui_lifespan(asgi_app) as s:
            await current.started()
            watcher = asyncio.create_task(_drain_early(current), name="drain") if state.webapp_drain_early else None
            try:
                yield s
            finally:
                await current.drain.finish()
                if watcher is not None:
                    watcher.cancel()
                await current.stopping()

    app.router.lifespan_context = lifespan


def _resource_server(webapp: WebApp) -> ResourceServer | None:
    """With `--auth-issuer`: `/mcp` as a resource server of the issuer read at start (now, if `main` did not)."""
    settings = webapp.settings
    if not settings.auth_issuer:
        return None
    if webapp.issuer is None:
        webapp.issuer = discover(settings.auth_issuer)

    def scoped() -> dict[str, str]:  # action tool → its own scope (`@mcp_app_action(scope=…)`)
        apps = [app for bridge in webapp.bridges for app in bridge.apps.values()]
        return {action.tool: action.scope for app in apps for action in app.actions if action.scope}

    def scopes_of(name: str) -> tuple[str, ...]:
        scope = scoped().get(name)
        return (scope,) if scope else ()

    def all_scopes() -> list[str]:
        return sorted(set(scoped().values()))

    return resource_server(settings, webapp.issuer, webapp.url(MCP_PATH), scopes_of, all_scopes)


def _people(webapp: WebApp, guard: ResourceServer) -> People:
    """With `--auth-issuer`: people sign in to the pages (with `--auth-client-id/--auth-client-secret`)."""
    from nicegui import Client

    settings = webapp.settings
    client_id, secret = settings.auth_client_id, settings.auth_client_secret

    def is_page(path: str) -> bool:
        return path in Client.page_routes.values()

    async def view_owner(path: str, key: str) -> tuple[bool, str | None]:
        for bridge in webapp.bridges:
            if any(app.route == path for app in bridge.apps.values()):
                view = await bridge.registry.lookup(key, "attach_key")
                if view is not None and bridge.apps[view.app].route == path:
                    return True, view.principal
        return False, None

    client = (client_id, secret) if client_id and secret else None
    return People(
        guard.check,
        webapp.base_url,
        client,
        is_page=is_page,
        view_owner=view_owner,
        needs=guard.needed,
        asks=guard.scopes_supported,
    )


@contextlib.asynccontextmanager
async def _running(
    webapp: WebApp, manager: StreamableHTTPSessionManager, stdio: StdioWire | None
) -> AsyncGenerator[None]:
    """Hold the session manager's one-shot `run()` in its own task (it must enter and exit in one task, pitfall P3),
    and serve stdio beside it."""
    ready, stop = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with manager.run():
            ready.set()
            await stop.wait()

    holder = asyncio.create_task(hold(), name="mcp-session-manager")
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({holder, waiter}, timeout=_STARTUP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if not ready.is_set():
        holder.cancel()
        failure = holder.exception() if holder.done() and not holder.cancelled() else None
        raise RuntimeError("the MCP session manager did not start") from failure
    stdio_task = asyncio.create_task(_serve_stdio(webapp, stdio), name="mcp-stdio") if stdio else None
    try:
        yield
    finally:
        if stdio_task is not None:
            stdio_task.cancel()
            await asyncio.gather(stdio_task, return_exceptions=True)
        stop.set()
        await asyncio.wait({holder}, timeout=_STARTUP_TIMEOUT)


async def _drain_early(webapp: WebApp) -> None:
    """Drain from the moment uvicorn is told to stop, then let the SSE streams end (uvicorn waits for them)."""
    from nicegui.server import Server

    await webapp.drain.watch(lambda: Server.instance.should_exit, _end_sse_streams)


def _end_sse_streams() -> None:
    AppStatus.should_exit = True


async def _serve_stdio(webapp: WebApp, wire: StdioWire) -> None:
    """MCP on the claimed stdin/stdout; when stdin closes, the whole server stops."""
    stdin = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire.stdin_fd, "rb", closefd=False), encoding="utf-8"))
    stdout = anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire.stdout_fd, "wb", closefd=False), encoding="utf-8"))
    server = webapp.build_mcp_server("stdio")
    try:
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except Exception:
        log.exception("the stdio transport failed")
    log.info("stdin closed: stopping the server")
    from nicegui import app

    app.shutdown()


def serve(
    webapp: WebApp, *, stdio: StdioWire | None = None, log_config: dict[str, Any] | None = None, **run: Any
) -> None:
    """Serve `webapp` with NiceGUI's `ui.run` until stopped (blocking); prints the page and MCP URLs first."""
    from nicegui import Client, app, ui

    from webapp.server.outbox_waits import untimed_outbox_waits

    settings = webapp.settings
    reservation = reserve_port(settings.host, settings.port)
    webapp.port = reservation.getsockname()[1]
    ops = OpsPort.bind(settings.host, settings.metrics_port, webapp) if settings.metrics_port is not None else None
    if ops is not None:  # it outlives the drain: a stopping worker's readiness says so on it
        webapp.on_startup(ops.start)
        webapp.on_shutdown(ops.stop)
    AppStatus.disable_automatic_graceful_drain()  # legacy calls answer on SSE streams: `_drain_early` ends them
    install(webapp, app, stdio=stdio, drain_early=True)
    _print_urls(webapp, sorted(set(Client.page_routes.values())), ops, print_to=sys.stderr if stdio else sys.stdout)
    # from the start on, the loaded NiceGUI, SDK and apps and then the views' objects stay out of the cyclic
    # collector's walks (the start-up heap alone made every large build, a Presenter of 10,000 rows, pay for it)
    keeper = HeapKeeper()
    app.on_startup(keeper.start)
    app.on_shutdown(keeper.stop)
    untimed_outbox_waits()
    try:
        ui.run(
            host=settings.host,
            port=webapp.port,
            title="webapp",
            language="en-US",  # every page's <html lang> (screen readers pick their voice by it)
            reload=False,
            show=False,
            reconnect_timeout=settings.reconnect_grace,
            tailwind=False,  # the pages link the prebuilt stylesheet instead (`install_stylesheet`)
            # no per-message deflate on the pages' sockets: its zlib windows cost ~270 KB per browser tab on the server
            # (a quarter of what a view costs), for messages that are a few hundred bytes
            ws_per_message_deflate=False,
            show_welcome_message=False,
            uvicorn_logging_level=settings.log_level.lower(),
            **({"log_config": log_config} if log_config else {}),
            **run,
        )
    finally:
        reservation.close()


def _print_urls(webapp: WebApp, pages: list[str], ops: OpsPort | None, print_to: Any) -> None:
    """The banner, printed rather than logged: it shows at every log level, on stdout (stderr with `--stdio`)."""
    settings = webapp.settings
    banner = Banner(
        url=webapp.base_url,
        pages=tuple(webapp.url(path) for path in pages),
        mcp=webapp.url(MCP_PATH),
        stdio=settings.stdio,
        metrics=webapp.url(METRICS_PATH) if metrics_on_serving_port(settings) else None,
        metrics_port=ops.url(METRICS_PATH) if ops is not None else None,
    )
    json_lines = JsonLogFormatter(webapp.calllog.masker, settings.worker_id) if settings.log_format == "json" else None
    for line in banner.lines(json_lines):
        print(line, file=print_to)
    print_to.flush()
