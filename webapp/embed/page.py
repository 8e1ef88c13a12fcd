"""Embedded mode of a view page (`?key=…&embed=1`, apps.md §13): the head script and layout, the page's host, and
which foreign-origin requests such a page may make (a frame in an opaque-origin sandbox sends `Origin: null`; a page
booted directly into a host's frame by a ticket sends the host sandbox's origin).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from urllib.parse import parse_qs

from nicegui import Client, ui
from starlette.types import Scope

from webapp.apps.definition import AppDefinition
from webapp.core.security import NullOriginGrant
from webapp.embed.host import EVENT, PageHost

__all__ = ["BOOT_PATH", "Boot", "EmbedOrigins", "EmbeddedMode"]

BOOT_PATH = "/_webapp/boot"
"""The route a shell fetches a view's embedded page from, with a one-time ticket (`?ticket=`)."""
_LAYOUT = """<style>
html, body { height: auto !important; min-height: 0 !important; }
.q-layout, .q-page-container, .q-page, .nicegui-layout { min-height: 0 !important; }
</style>"""
_HEAD = f"<script>{files('webapp.embed').joinpath('head.js').read_text(encoding='utf-8')}</script>\n{_LAYOUT}"
_TUNNEL = f"<script>{files('webapp.embed').joinpath('tunnel.js').read_text(encoding='utf-8')}</script>"
_BODY = '<script type="module">window.__webappBeforeApp();</script>'  # runs after nicegui.js, before the app
_READY = "window.__webappHost && window.__webappHost.ready()"
_STATIC = ("/_nicegui/", "/_webapp/pages-")  # NiceGUI's assets and the pages' stylesheet (`webapp.server`)
_REFRESH = 30.0  # seconds between the fresh reload tickets a booted page holds (each lives `TICKET_TTL`, 60 s)


@dataclass(frozen=True, slots=True)
class Boot:
    """A page render that a redeemed ticket asked for: the view it shows and where the page's URLs must point."""

    view: str
    principal: str | None
    origin: str
    tunnel: str | None = None  # a tunnelled page's tunnel id (its socket travels by tool calls)


class EmbeddedMode:
    """Turns a page into an embedded one (the bridge's `Embedder`) and remembers which NiceGUI clients are embedded,
    and which of them were booted by a ticket (they keep a fresh ticket for a reload, made by `ticketer`)."""

    def __init__(
        self,
        *,
        timeout: float,
        ticketer: Callable[[str, str | None], Awaitable[str]] | None = None,
        base_url: Callable[[], str] = str,
    ) -> None:
        self._timeout = timeout
        self._ticketer = ticketer
        self._base_url = base_url
        self._boots: dict[str, Boot] = {}  # one-time render nonce -> what the redeemed ticket opens
        self._rendered: dict[str, str] = {}  # render nonce -> the NiceGUI client that render made (until forgotten)
        self.clients: set[str] = set()
        self.booted: set[str] = set()

    def expect(self, boot: Boot) -> str:
        """A nonce for the next render of the view's page (`&boot=`): only such a render is a booted page."""
        nonce = secrets.token_urlsafe(24)
        self._boots[nonce] = boot
        return nonce

    def forget(self, nonce: str) -> str | None:
        """Done with the render of `nonce`: the id of the NiceGUI client it made, if it made one."""
        self._boots.pop(nonce, None)
        return self._rendered.pop(nonce, None)

    def __call__(self, client: Client, app: AppDefinition) -> PageHost:
        nonce = client.request.query_params.get("boot", "")
        boot = self._boots.pop(nonce, None)
        with client:
            if boot is not None:
                self._rendered[nonce] = client.id
                settings = {"origin": boot.origin, **({"tunnel": boot.tunnel} if boot.tunnel else {})}
                ui.add_head_html(f"<script>window.__webappBoot = {json.dumps(settings)};</script>")
                if boot.tunnel:
                    ui.add_head_html(_TUNNEL)
            ui.add_head_html(_HEAD)
            ui.add_body_html(_BODY)
        self.clients.add(client.id)
        client.on_delete(lambda: self.clients.discard(client.id))
        host = PageHost(client, timeout=self._timeout, base_url=self._base_url())
        client.layout.on(EVENT, host.receive)
        client.on_connect(lambda: client.run_javascript(_READY))  # from now on the page hands host messages over
        if boot is not None:
            self._booted(client, boot)
        return host

    def _booted(self, client: Client, boot: Boot) -> None:
        self.booted.add(client.id)
        client.on_delete(lambda: self.booted.discard(client.id))
        ticketer = self._ticketer
        if ticketer is None or boot.tunnel is not None:  # a tunnelled page reloads over its live tunnel
            return

        async def hand_over() -> None:  # a reload inside the host's frame boots again with this ticket
            if client.has_socket_connection:
                ticket = json.dumps(await ticketer(boot.view, boot.principal))
                client.run_javascript(f"window.__webappHost && window.__webappHost.ticket({ticket})")

        client.on_connect(hand_over)
        with client.layout:
            ui.timer(_REFRESH, hand_over)


class EmbedOrigins:
    """The foreign-origin rule of embedded pages (`NullOriginRule`). `Origin: null`: NiceGUI's static assets (for
    anyone, as a CDN would serve them), the socket of an embedded client, the reconnect check of a page with a valid key
    and `embed=1`, and the boot route. Any other foreign origin (a host sandbox's): the static assets, the boot route
    when asked with a ticket, the socket of a client booted by a valid ticket only, and a nested frame's navigation to a
    page with a valid key and `embed=1` (`Sec-Fetch-Dest: iframe`; no CORS grant: the key authenticates it)."""

    def __init__(self, clients: set[str], booted: set[str], valid_page: Callable[[str, str], Awaitable[bool]]) -> None:
        self._clients = clients
        self._booted = booted
        self._valid_page = valid_page  # (path, key) -> whether the key opens a view of the app at that path

    async def __call__(self, scope: Scope) -> NullOriginGrant | None:
        path: str = scope.get("path", "")
        method = scope.get("method", "GET")
        query = parse_qs(bytes(scope.get("query_string", b"")).decode("latin-1"))
        opaque = _origin(scope) in (None, "null")
        if path.startswith("/_nicegui_ws/"):
            client_id = query.get("client_id", [""])[0]
            return "pass" if client_id in (self._clients if opaque else self._booted) else None
        if scope["type"] != "http" or method not in ("GET", "HEAD", "OPTIONS"):
            return None
        if path.startswith(_STATIC) and method != "OPTIONS":
            return "cors"
        if path == BOOT_PATH and method == "GET" and query.get("ticket", [""])[0]:
            return "cors"  # the route itself opens nothing without a valid ticket
        key = query.get("key", [""])[0]
        if not (query.get("embed") == ["1"] and key and await self._valid_page(path, key)):
            return None
        if opaque:
            return "cors"
        # Chromium sends the sandbox's origin with a nested frame's navigation, and every cloud host's sandbox is
        # cross-site to the server; the frame's page then runs on our origin, so its socket keeps the rules above.
        return "frame" if method == "GET" and _header(scope, b"sec-fetch-dest") == "iframe" else None


def _origin(scope: Scope) -> str | None:
    return _header(scope, b"origin")


def _header(scope: Scope, name: bytes) -> str | None:
    return next((bytes(v).decode("latin-1") for k, v in scope.get("headers", ()) if k == name), None)
