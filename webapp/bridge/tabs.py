"""The browser side of views: each app's NiceGUI page, attaching a tab to its view by the URL's attach key,
building the app's view object in it, following the tab's socket, and detaching (compare-and-set on the client).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Mapping

from nicegui import Client, ui
from nicegui.client import ClientConnectionTimeout

from webapp.apps.definition import AppDefinition, ViewContext
from webapp.apps.host import Host, HostError
from webapp.bridge.announce import announcer
from webapp.bridge.confirm import confirmation
from webapp.bridge.registry import ViewRecord, ViewRegistry, ViewState, mask
from webapp.core.sql import UNAVAILABLE_ERRORS

__all__ = ["ELSEWHERE_NOTICE", "REPLACED_NOTICE", "TAKEN_OVER_NOTICE", "UNKNOWN_NOTICE", "Embedder", "Tabs", "Ticketer"]

log = logging.getLogger(__name__)
UNKNOWN_NOTICE = "This view link is unknown or has expired. Ask the assistant to open the view again."
REPLACED_NOTICE = "This view was replaced by a newer one. Use the newest link the assistant gave you."
TAKEN_OVER_NOTICE = "This view is now shown in another tab."
ELSEWHERE_NOTICE = "This view is open in a browser tab, outside this chat: the assistant's changes show there."
AWAY_NOTICE = "The server cannot reach its database just now. This page loads again in a moment."
_RELOAD_AFTER = 2.0  # seconds before a page that met an unreachable database loads again
_CONNECT_TIMEOUT = 60.0

Embedder = Callable[[Client, AppDefinition], Host]
"""Turns a page loaded with a valid key and `embed=1` into embedded mode (called before the page is sent); returns
the host the view will reach (`webapp.embed` provides it)."""
Ticketer = Callable[[ViewRecord], Awaitable[str]]
"""Makes a one-time ticket that loads the view's embedded page directly into a host's frame (`webapp.embed`)."""


def show_notice(client: Client, text: str) -> None:
    """Replace what a tab shows by a short notice (no reload, no error page)."""
    if client.is_deleted:
        return
    client.content.clear()
    with client.content:
        ui.label(text).classes("text-lg m-8").mark("webapp-notice")


class Tabs:
    """Attaches NiceGUI clients (tabs) to views; one tab per view, the newest wins."""

    def __init__(
        self,
        registry: ViewRegistry,
        apps: Mapping[str, AppDefinition],
        *,
        reconnect_grace: float,
        lock_timeout: float,
        on_attached: Callable[[ViewRecord], Awaitable[None]],
        on_detached: Callable[[ViewRecord], None] | None = None,
        may_take: Callable[[ViewRecord, bool], Awaitable[bool]] | None = None,
    ) -> None:
        self._registry = registry
        self._apps = apps
        self._grace = reconnect_grace
        self._lock_timeout = lock_timeout
        self._on_attached = on_attached
        self._on_detached: Callable[[ViewRecord], None] = on_detached or _ignore
        self._may_take = may_take or _anyway
        self.stopping = False  # at shutdown, lost sockets must not mark views closed
        self.embedder: Embedder | None = None
        self.ticketer: Ticketer | None = None
        self.guests: Collection[str] = ()
        """Ids of the NiceGUI clients whose page a host's shell loaded itself (booted by a ticket or tunnelled; set by
        `webapp.embed`): such a page never takes over a live tab a person opened outside a host (apps.md §13)."""
        self.base_url: Callable[[], str] = str
        """The public URL that view links start with (set by `webapp.embed`; empty: root-relative links)."""
        self._hosts: dict[str, Host] = {}  # NiceGUI client id -> the host of an embedded tab

    def register_page(self, app: AppDefinition) -> None:
        """Serve `app.route`: with `?key=` it shows that view, without it a new view a caller may adopt."""

        @ui.page(app.route, reconnect_timeout=self._grace)
        async def _page(client: Client, key: str = "", embed: str = "") -> None:  # pyright: ignore[reportUnusedFunction]
            await self._serve(app, client, key, embed == "1")

    async def _serve(self, app: AppDefinition, client: Client, key: str, embed: bool) -> None:
        try:
            await self._open(app, client, key, embed)
        except UNAVAILABLE_ERRORS as error:  # the page would stay blank: it says so and loads again shortly
            log.warning("a tab could not open its view: the database cannot be reached (%s)", type(error).__name__)
            show_notice(client, AWAY_NOTICE)
            with client:
                ui.timer(_RELOAD_AFTER, ui.navigate.reload, once=True)

    async def _open(self, app: AppDefinition, client: Client, key: str, embed: bool) -> None:
        # several workers: its row as the one that held it left it
        view = await self._registry.lookup(key, "attach_key") if key else None
        if key and (view is None or view.app != app.name):
            show_notice(client, UNKNOWN_NOTICE)
            return
        if embed and view is not None and self.embedder is not None:
            self._hosts[client.id] = self.embedder(client, app)
            client.on_delete(lambda: self._hosts.pop(client.id, None))
        try:
            await client.connected(timeout=_CONNECT_TIMEOUT)  # attach only tabs that really connect
        except ClientConnectionTimeout:
            return
        if view is None:
            view = await self._registry.create(app.name, principal=None, session_id=None, bound=False, arguments=None)
            ui.navigate.history.replace(f"{app.route}?key={view.attach_key}")  # so a reload finds it again
        host = self._hosts.get(client.id)
        if host is not None and not await host.ready():
            log.warning("view %r: the host did not introduce itself; building the view without its details", view)
        if view.state is ViewState.REPLACED:
            show_notice(client, REPLACED_NOTICE)
        elif view.state is ViewState.EXPIRED:
            show_notice(client, UNKNOWN_NOTICE)
        else:
            await self.attach(view, client)

    @contextlib.asynccontextmanager
    async def locked(self, view: ViewRecord) -> AsyncGenerator[None]:
        """Hold the view's lock, waiting for a running call at most `lock_timeout` (then go ahead anyway)."""
        try:
            async with asyncio.timeout(self._lock_timeout):
                await view.lock.acquire()
        except TimeoutError:
            log.warning("view %r: a call held the lock too long; attaching anyway", view)
            yield
            return
        try:
            yield
        finally:
            view.lock.release()

    async def attach(self, view: ViewRecord, client: Client) -> None:
        """Make `client` the view's tab: the older tab gets a notice, the app's view is built from saved state. Newest
        wins between a person's tabs and between frames of hosts, but a page a host's shell loaded itself leaves a
        person's live tab alone and shows a card with the view's link instead."""
        async with self.locked(view):
            old = view.client
            if old is not None and self._keeps(view, old, client):
                self._show_elsewhere(view, client)
                return
            if old is None and not await self._may_take(view, client.id in self.guests):  # a tab on another worker
                self._show_elsewhere(view, client)
                return
            view.client, view.instance = client, None
            if old is not None and old is not client:
                show_notice(old, TAKEN_OVER_NOTICE)
            self.build(view)
            client.on_disconnect(lambda: self._lost(view, client))
            client.on_connect(lambda: self._back(view, client))
            client.on_delete(lambda: self._gone(view, client))
            view.set_state(ViewState.LIVE, time.time())
            await self._registry.claim(view)
            log.info("view %r attached", view)
        await self._on_attached(view)

    def yield_to(self, view: ViewRecord, guest: bool) -> bool:
        """A tab attaching on another worker wants the view (`guest`: a page a host's shell loaded there): whether
        this worker's tab lets it go, detached with the moved notice, or keeps it (a person's live tab, against a
        guest page); one live tab per view across workers."""
        old = view.client
        if old is None or old.is_deleted:
            return True
        if guest and old.id not in self._hosts and view.state is ViewState.LIVE:
            return False
        self.detach(view, TAKEN_OVER_NOTICE)
        return True

    def _keeps(self, view: ViewRecord, old: Client, client: Client) -> bool:
        """Whether `old`, a live tab a person opened outside a host, keeps the view from `client`, a page a host's
        shell booted by a ticket or tunnelled (a framed page is the host's nested frame: newest wins there)."""
        return (
            old is not client
            and client.id in self.guests
            and old.id not in self._hosts
            and view.state is ViewState.LIVE
            and not old.is_deleted
        )

    def _show_elsewhere(self, view: ViewRecord, client: Client) -> None:
        """The card a host's page shows instead of a view a person has open in a browser tab: a button that asks the
        host to open that tab's link, and the link itself where the host cannot."""
        link = f"{self.base_url().rstrip('/')}{self._apps[view.app].route}?key={view.attach_key}"
        host = self._hosts.get(client.id)
        log.info("view %r stays in the browser tab a person opened; a host's page shows its link", view)
        client.content.clear()
        with client.content, ui.card().props('flat bordered data-testid="webapp-open-card"').classes("m-2"):
            ui.label(ELSEWHERE_NOTICE)
            shown = ui.label(link).classes("text-xs break-all").props('data-testid="webapp-open-link"')
            shown.set_visibility(False)

            async def open_in_browser() -> None:
                try:
                    if host is not None:
                        await host.open_link(link)
                        return
                except HostError:
                    pass
                shown.set_visibility(True)  # to copy by hand

            ui.button("Open in your browser", on_click=open_in_browser).props("no-caps unelevated color=indigo")

    def build(self, view: ViewRecord) -> None:
        """(Re)build the app's view object in the attached tab from the view's input and data."""
        client = view.client
        if client is None:
            return
        app = self._apps[view.app]

        def save() -> None:
            self._registry.keep_data(view)

        context = ViewContext[object](
            app=app.name,
            input=app.parse_input(view.input),
            data=view.data,
            save=save,
            host=self._hosts.get(client.id),
        )
        client.content.clear()
        with client:
            view.instance = app.build_view(context)
        confirmation(client)  # ready before the first call that changes the tab
        announcer(client)  # a live region is on the page before it has anything to say
        view.notify()

    def detach(self, view: ViewRecord, notice: str) -> None:
        """Drop the view's tab (it shows `notice`)."""
        client, view.client, view.instance = view.client, None, None
        if client is not None:
            show_notice(client, notice)

    def _lost(self, view: ViewRecord, client: Client) -> None:
        if view.client is client and view.state is ViewState.LIVE:
            view.set_state(ViewState.DISCONNECTED, time.time())
            if not self.stopping:
                self._registry.save_soon(view)

    def _back(self, view: ViewRecord, client: Client) -> None:
        if view.client is client and view.state is ViewState.DISCONNECTED and not self.stopping:
            view.set_state(ViewState.LIVE, time.time())
            self._registry.save_soon(view)

    def _gone(self, view: ViewRecord, client: Client) -> None:
        if view.client is not client or self.stopping:
            return  # an older tab's late delete never detaches the newer one
        view.client, view.instance = None, None
        if view.is_open:
            view.set_state(ViewState.CLOSED, time.time())
        view.worker = None  # saved as held by nobody: any worker may expire it (a newer holder's row stays)
        self._registry.save_soon(view)
        self._on_detached(view)
        log.info("view %s of %s closed", mask(view.handle), view.app)


def _ignore(_view: ViewRecord) -> None:
    pass


async def _anyway(_view: ViewRecord, _guest: bool) -> bool:
    return True
