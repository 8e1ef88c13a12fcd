"""MCP Apps (SEP-1865): the `ui://` shell resources, the result widget, embedded mode of view pages, and host
interaction.

`install_embedding(server, bridge)` runs when apps are installed; it sits above the bridge and below the server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from starlette.routing import Route

from webapp.bridge.dispatch import Bridge
from webapp.bridge.registry import ViewRecord
from webapp.calllog.memory import CallLog
from webapp.core.security import NullOriginRule
from webapp.core.settings import Settings
from webapp.embed.boot import DirectBoot
from webapp.embed.directory import TunnelDirectory
from webapp.embed.host import PageHost
from webapp.embed.inline import PageInliner
from webapp.embed.page import BOOT_PATH, EmbeddedMode, EmbedOrigins
from webapp.embed.resource import ShellResources, public_origin, shell_csp
from webapp.embed.result import ResultWidget
from webapp.embed.tickets import TicketStore
from webapp.embed.tunnel import Tunnels
from webapp.embed.tunnel_tools import TunnelService
from webapp.tools.registry import Tool

__all__ = [
    "BOOT_PATH",
    "DirectBoot",
    "EmbedOrigins",
    "EmbeddedMode",
    "EmbeddingServer",
    "PageHost",
    "ResultWidget",
    "ShellResources",
    "TicketStore",
    "TunnelService",
    "install_embedding",
    "public_origin",
    "shell_csp",
]


class EmbeddingServer(Protocol):
    """What embedding needs of the server (`webapp.server.WebApp`)."""

    settings: Settings
    null_origin_rules: list[NullOriginRule]
    calllog: CallLog
    tunnel: TunnelService | None
    boots: Counter[str]
    """Direct boots by outcome, over every bridge (`DirectBoot.counts`)."""

    @property
    def base_url(self) -> str: ...
    def add_resources(self, source: ShellResources, /) -> None: ...
    def add_tool(self, tool: Tool, /) -> None: ...
    def on_startup(self, hook: Callable[[], Awaitable[None] | None], /) -> Any: ...
    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None], /) -> Any: ...


def install_embedding(server: EmbeddingServer, bridge: Bridge) -> None:
    """Serve the shells of the bridge's apps, let their pages run embedded or boot directly by ticket
    (`/_webapp/boot`), and admit those pages' foreign origins."""
    settings = server.settings
    tickets = TicketStore(settings.db)
    mode = EmbeddedMode(timeout=settings.call_timeout, ticketer=tickets.make, base_url=lambda: server.base_url)
    boot = DirectBoot(
        bridge,
        tickets,
        mode,
        lambda: server.base_url,
        timeout=settings.call_timeout,
        app=_nicegui_app,
        counts=server.boots,
    )

    async def ticket(view: ViewRecord) -> str:
        return await tickets.make(view.handle, view.principal)

    bridge.tabs.embedder = mode
    bridge.tabs.ticketer = ticket
    bridge.tabs.guests = mode.booted  # booted or tunnelled: they never take over a person's tab (apps.md §13)
    bridge.tabs.base_url = lambda: server.base_url
    server.on_startup(tickets.open)
    server.on_shutdown(tickets.close)
    tunnel = server.tunnel
    if tunnel is None:  # one tunnel service per server, over every bridge's views
        tunnel = server.tunnel = _tunnel_service(server, tickets, boot)
        for tool in tunnel.tools():
            server.add_tool(tool)
        server.on_startup(tunnel.start)
        server.on_shutdown(tunnel.stop)
    tunnel.bridges.append(bridge)
    _route(Route(BOOT_PATH, boot.page, methods=["GET"]))
    server.add_resources(
        ShellResources(lambda: list(bridge.apps.values()), lambda: server.base_url, domain=server.settings.ui_domain)
    )

    async def valid_page(path: str, key: str) -> bool:
        view = await bridge.registry.lookup(key, "attach_key")
        return view is not None and view.is_open and bridge.apps[view.app].route == path

    server.null_origin_rules.append(EmbedOrigins(mode.clients, mode.booted, valid_page))


def _tunnel_service(server: EmbeddingServer, tickets: TicketStore, boot: DirectBoot) -> TunnelService:
    from nicegui.nicegui import sio_app

    async def fetch(path: str) -> tuple[bytes, str]:
        transport = httpx.ASGITransport(app=_nicegui_app())
        async with httpx.AsyncClient(transport=transport, base_url="http://tunnel", timeout=30.0) as client:
            answer = await client.get(path, headers={"Host": urlsplit(server.base_url).netloc})
        answer.raise_for_status()
        return answer.content, answer.headers.get("content-type", "")

    tunnels = Tunnels(
        sio_app,
        chunk=server.settings.tunnel_chunk,
        host=lambda: urlsplit(server.base_url).netloc,
        disconnect=_end_session,
        session_alive=lambda sid: sid in _engineio().sockets,
        on_secret=server.calllog.add_secret,
        on_forget=server.calllog.discard_secret,
    )
    tunnels.directory = TunnelDirectory(server.settings.db)
    server.on_shutdown(tunnels.directory.close)
    return TunnelService(tunnels, tickets, boot, PageInliner(fetch), lambda: server.base_url)


async def _end_session(sid: str) -> None:
    """End the engine.io session `sid` at once: its page is gone, so nothing waits for it to read the close packet."""
    server = _engineio()
    socket = server.sockets.get(sid)
    if socket is not None:
        await socket.close(wait=False, abort=True, reason=server.reason.SERVER_DISCONNECT)
        server.sockets.pop(sid, None)


def _engineio() -> Any:
    from nicegui import core

    return core.sio.eio


def _nicegui_app() -> Any:
    from nicegui import app

    return app


def _route(route: Route) -> None:
    """Serve `route` from NiceGUI's app, in place of the one a server built before in this process (tests)."""
    from nicegui import app

    routes = app.router.routes
    routes[:] = [known for known in routes if not (isinstance(known, Route) and known.path == route.path)]
    routes.insert(0, route)
