"""MCP Apps (SEP-1865): the `ui://` shell resources, the result widget, embedded mode of view pages, and host
interaction.

`install_embedding(server, bridge)` runs when apps are installed; it sits above the bridge and below the server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from starlette.routing import Route

from webapp.bridge.dispatch import Bridge
from webapp.bridge.registry import ViewRecord
from webapp.core.security import NullOriginRule
from webapp.core.settings import Settings
from webapp.embed.boot import DirectBoot
from webapp.embed.host import PageHost
from webapp.embed.page import BOOT_PATH, EmbeddedMode, EmbedOrigins
from webapp.embed.resource import ShellResources, public_origin, shell_csp
from webapp.embed.result import ResultWidget
from webapp.embed.tickets import TicketStore

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
    "install_embedding",
    "public_origin",
    "shell_csp",
]


class EmbeddingServer(Protocol):
    """What embedding needs of the server (`webapp.server.WebApp`)."""

    settings: Settings
    null_origin_rules: list[NullOriginRule]

    @property
    def base_url(self) -> str: ...
    def add_resources(self, source: ShellResources, /) -> None: ...
    def on_startup(self, hook: Callable[[], Awaitable[None] | None], /) -> Any: ...
    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None], /) -> Any: ...


def install_embedding(server: EmbeddingServer, bridge: Bridge) -> None:
    """Serve the shells of the bridge's apps, let their pages run embedded or boot directly by ticket
    (`/_webapp/boot`), and admit those pages' foreign origins."""
    settings = server.settings
    tickets = TicketStore(settings.db)
    mode = EmbeddedMode(timeout=settings.call_timeout, ticketer=tickets.make, base_url=lambda: server.base_url)
    boot = DirectBoot(bridge, tickets, mode, lambda: server.base_url, timeout=settings.call_timeout)

    def ticket(view: ViewRecord) -> str:
        return tickets.make(view.handle, view.principal)

    bridge.tabs.embedder = mode
    bridge.tabs.ticketer = ticket
    server.on_startup(tickets.open)
    server.on_shutdown(tickets.close)
    _route(Route(BOOT_PATH, boot.page, methods=["GET"]))
    server.add_resources(
        ShellResources(lambda: list(bridge.apps.values()), lambda: server.base_url, domain=server.settings.ui_domain)
    )

    def valid_page(path: str, key: str) -> bool:
        view = bridge.registry.by_attach_key(key)
        return view is not None and view.is_open and bridge.apps[view.app].route == path

    server.null_origin_rules.append(EmbedOrigins(mode.clients, mode.booted, valid_page))


def _route(route: Route) -> None:
    """Serve `route` from NiceGUI's app, in place of the one a server built before in this process (tests)."""
    from nicegui import app

    routes = app.router.routes
    routes[:] = [known for known in routes if not (isinstance(known, Route) and known.path == route.path)]
    routes.insert(0, route)
