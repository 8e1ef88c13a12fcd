"""The session bridge: opens views for callers and runs action and update calls inside the right view's tab.

Each call waits (bounded) for a tab, runs under the view's lock and a timeout, and ends with one browser round trip
when it sent the tab anything (a call that changed nothing in the page has nothing to confirm).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import mcp_types

from webapp.apps.definition import AppDefinition, McpAppUpdateEvent
from webapp.bridge.announce import announced, words_of
from webapp.bridge.confirm import confirmation, round_trip
from webapp.bridge.errors import ViewError
from webapp.bridge.registry import ViewRecord, ViewRegistry, ViewState
from webapp.bridge.routing import Router
from webapp.bridge.store import ViewStore
from webapp.bridge.tabs import REPLACED_NOTICE, TAKEN_OVER_NOTICE, Tabs
from webapp.bridge.transport import Forwarded, LocalTransport, Transport
from webapp.calllog.memory import note_routed_view
from webapp.core.context import CallContext, Caller
from webapp.core.settings import Settings, is_loopback
from webapp.core.tracing import span
from webapp.events import AppEvents
from webapp.tools.outcomes import OutcomeStore

__all__ = ["Bridge", "BridgeSettings", "Opened"]

log = logging.getLogger(__name__)
T = TypeVar("T")
_FOLLOW = 0.1  # seconds between two looks at the database while a call waits for a view another worker may hold


@dataclass(frozen=True, slots=True)
class BridgeSettings:
    """Durations (seconds) and switches of apps.md §7–§9."""

    wait_for_live: float = 10.0
    reconnect_grace: float = 15.0
    pending_expiry: float = 600.0
    closed_expiry: float = 1800.0
    call_timeout: float = 30.0
    browser_confirm: bool = True
    reopen: Literal["reuse", "new"] = "reuse"
    local_mode: bool = True
    max_views: int = 20  # open views per caller (principal, else MCP session)

    @classmethod
    def from_settings(cls, settings: Settings) -> BridgeSettings:
        return cls(
            wait_for_live=settings.wait_for_live,
            reconnect_grace=settings.reconnect_grace,
            pending_expiry=settings.pending_expiry,
            closed_expiry=settings.closed_expiry,
            call_timeout=settings.call_timeout,
            browser_confirm=settings.browser_confirm,
            reopen=settings.reopen,
            local_mode=is_loopback(settings.host) and not settings.tokens,
            max_views=settings.max_views_per_caller,
        )

    @property
    def return_grace(self) -> float:
        """How long a view restored after a restart waits for its tab to come back before it counts as closed
        (a tab's socket retries with a back-off of a few seconds, then the page reloads and re-attaches)."""
        return max(self.reconnect_grace, self.wait_for_live)

    @property
    def sweep_interval(self) -> float:
        return min(max(min(self.pending_expiry, self.closed_expiry, self.reconnect_grace) / 4, 0.05), 5.0)


@dataclass(frozen=True, slots=True)
class Opened:
    """What an opening call did: the view it opened or reused."""

    view: ViewRecord
    reused: bool


class Bridge:
    """Views of all apps of one server: opening, routing, dispatch, life cycle, persistence."""

    def __init__(
        self,
        settings: BridgeSettings,
        store: ViewStore,
        *,
        on_secret: Callable[[str], None] | None = None,
        on_forget_secret: Callable[[str], None] | None = None,
        on_new_view: Callable[[ViewRecord], None] | None = None,
        events: AppEvents | None = None,
    ) -> None:
        self.settings = settings
        self._events = events
        self.registry = ViewRegistry(store, on_secret=on_secret, on_forget=on_forget_secret)
        self.registry.on_lost = lambda view: self.tabs.detach(view, TAKEN_OVER_NOTICE)
        self.router = Router(self.registry, local_mode=settings.local_mode)
        self.transport: Transport = LocalTransport()
        """How calls reach views held by other workers (`webapp.cluster` sets it before the start)."""
        self.outcomes: OutcomeStore | None = None
        """The stored outcomes of its apps' action calls with a `_call_id` (set by `install_apps`)."""
        self.apps: dict[str, AppDefinition] = {}
        self._on_new_view: Callable[[ViewRecord], None] = on_new_view or _ignore
        self.tabs = Tabs(
            self.registry,
            self.apps,
            reconnect_grace=settings.reconnect_grace,
            lock_timeout=settings.call_timeout,
            on_attached=self._attached,
            on_detached=lambda view: self.transport.detached(view),
            may_take=lambda view, guest: self.transport.may_take(view, guest),
        )
        self._sweeper: asyncio.Task[None] | None = None

    # -- set-up -------------------------------------------------------------------------------------------------
    def add_app(self, app: AppDefinition) -> None:
        """Serve the app's page; its tools call `open` and `call`."""
        self.apps[app.name] = app
        self.tabs.register_page(app)

    async def start(self) -> None:
        """Restore the stored views of this bridge's apps and start the expiry sweeps."""
        await self.registry.load(self.apps)
        self.tabs.stopping = False
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep_forever(), name="webapp-view-sweeps")

    async def stop(self) -> None:
        self.tabs.stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self._sweeper = None
        for view in self.registry:
            self.registry.save_data_soon(view)
        await self.registry.close()  # after those writes

    def session_ended(self, session_id: str) -> None:
        """A legacy MCP session ended: its views stay open (reachable by `_view`, unbound in local mode)."""
        self.registry.active_sessions.discard(session_id)

    def url(self, view: ViewRecord, base_url: str) -> str:
        return f"{base_url.rstrip('/')}{self.apps[view.app].route}?key={view.attach_key}"

    # -- opening ------------------------------------------------------------------------------------------------
    async def open(
        self,
        app: str,
        caller: Caller,
        *,
        view_id: str | None,
        arguments: dict[str, Any],
        ctx: CallContext | None = None,
    ) -> Opened:
        """apps.md §4: reuse the named or routed view, adopt an unbound one (local mode), or create a new one; a
        view whose tab another worker holds is reused there (`Forwarded` carries that worker's result)."""
        self._note(caller)
        shared = self.transport.shared
        if ctx is not None and ctx.target is not None:
            view: ViewRecord | None = self.router.forwarded(app, caller, ctx.target)  # attached here: the truth
        elif view_id is not None:
            if shared:
                await self.registry.refresh_one(view_id)  # the named view's row only
            view = self.router.by_id(app, caller, view_id)
        else:
            if shared:
                await self.router.follow(caller)  # the rows routing may pick for this caller, by index
            view = self.router.reusable(app, caller)
        if view is not None and not view.is_open:
            view = None  # closed or replaced: a new view is created
        if view is not None and view.state is not ViewState.PENDING and ctx is not None and self._remote(ctx):
            try:
                forwarded = None if view.is_live else await self.transport.forward(view, ctx)
            except ViewError as error:
                if error.code != "VIEW_UNAVAILABLE":
                    raise
                forwarded = None  # its worker is gone: reused here, its tab attaches wherever it comes back
            if forwarded is not None:
                raise Forwarded(forwarded)
        if shared and (view is None or self.settings.reopen == "new") and (view_id or (ctx and ctx.target)):
            await self.router.follow(caller)  # adoption and the per-caller limit look at the caller's rows too
        if self.settings.reopen == "new":
            if view is not None:
                await self.replace(view)
            view = None
        elif view is None and not caller.apps:  # an inline frame never adopts a person's tab (apps.md §13)
            view = self.router.adoptable(app)
        if view is None:
            if len(self.router.owned(caller)) >= self.settings.max_views:
                raise ViewError("TOO_MANY_VIEWS", app, limit=self.settings.max_views)
            view = await self.registry.create(
                app, principal=caller.principal, session_id=caller.session_id, bound=True, arguments=arguments
            )
            self._on_new_view(view)
            return Opened(view, reused=False)
        view.bound, view.bound_at = True, time.time()
        view.session_id = caller.session_id or view.session_id
        view.principal = caller.principal or view.principal
        await self._deliver(view, arguments)
        await self.registry.save(view)
        if not view.is_open:  # its tab went for good meanwhile (while it was saved): the opening starts over
            return await self.open(app, caller, view_id=view_id, arguments=arguments, ctx=ctx)
        return Opened(view, reused=True)

    async def replace(self, view: ViewRecord) -> None:
        view.set_state(ViewState.REPLACED, time.time())
        self.tabs.detach(view, REPLACED_NOTICE)
        await self.registry.save(view)

    async def _attached(self, view: ViewRecord) -> None:
        try:
            await self.transport.attached(view)
        except ViewError:  # Redis is away: the lease is claimed once it is back
            log.warning("view %r attached while the other workers cannot be reached", view)
        await self._deliver_pending(view)

    async def _deliver(self, view: ViewRecord, arguments: dict[str, Any]) -> None:
        """Give a reused view its new arguments: via the update observer, else by rebuilding it in place."""
        app = self.apps[view.app]
        view.input = arguments
        if view.state is ViewState.PENDING:
            return  # never built yet: its tab builds it from the new input
        if not app.has_observer:
            view.data = {}
            if view.is_live:
                async with self.tabs.locked(view):
                    self.tabs.build(view)
            return
        view.pending_update = arguments
        if view.is_live:
            await self._deliver_pending(view)

    async def _deliver_pending(self, view: ViewRecord) -> None:
        arguments, view.pending_update = view.pending_update, None
        if arguments is None:
            return
        event = McpAppUpdateEvent(tool=view.app, arguments=arguments, fields_set=frozenset(arguments))

        async def observe(instance: Any) -> Any:
            return await _call(instance.on_mcp_app_update, event)

        try:
            await self.run(view, observe, confirm=False)
        except Exception:  # the result of a delivery is discarded; the caller still gets its view
            log.exception("view %r: the update observer failed on reuse", view)

    # -- calls --------------------------------------------------------------------------------------------------
    async def call(
        self,
        app: str,
        caller: Caller,
        view_id: str | None,
        handler: Callable[[Any], Awaitable[T]],
        *,
        ctx: CallContext | None = None,
        finish: Callable[[T], Any] | None = None,
    ) -> Any:
        """Route the call, wait for a tab, run `handler(instance)` in it; raises ViewError when it cannot. A view
        whose tab another worker holds gets the call `ctx` there (`Forwarded` carries that worker's result).
        `finish(value)`, the call's result from the handler's value, runs while the tab applies the change."""
        self._note(caller)
        target = ctx.target if ctx is not None else None  # a call another worker forwarded: this worker's view
        view = await self.router.reach(app, caller, view_id, target=target, shared=self.transport.shared)
        note_routed_view(view.handle)
        forwarded = await self._wait_live(view, view_id or view.handle, ctx if self._remote(ctx) else None)
        if forwarded is not None:
            raise Forwarded(forwarded)
        handler = announced(handler, view, words_of(app, ctx.tool if ctx is not None else app))
        return await self.run(view, handler, confirm=self.settings.browser_confirm, finish=finish)

    def _remote(self, ctx: CallContext | None) -> bool:
        """Whether this call may go to another worker (a forwarded call never goes on)."""
        return self.transport.shared and ctx is not None and ctx.target is None

    async def run(
        self,
        view: ViewRecord,
        handler: Callable[[Any], Awaitable[T]],
        *,
        confirm: bool,
        finish: Callable[[T], Any] | None = None,
    ) -> Any:
        """Run `handler(instance)` under the view's lock and the call timeout, inside its NiceGUI client; with
        `finish`, return `finish(value)`, run once the tab has been sent the change and before its answer."""
        seconds = self.settings.call_timeout
        budget = asyncio.timeout(seconds)
        try:
            async with budget:  # covers the wait for the lock and the handler
                with self._holding(), span(f"webapp tab {view.app}", attributes=view.traced):
                    async with view.lock:
                        client, instance = view.client, view.instance
                        if client is None or instance is None or client.is_deleted:
                            raise ViewError("VIEW_CLOSED", view.app)
                        tab = confirmation(client) if confirm else None
                        mark = tab.queued() if tab is not None else (0, 0)
                        with client:
                            value = await handler(instance)
                        budget.reschedule(None)
                        kept = self.registry.keep_data(view)  # written while the tab applies the change
                        value = await round_trip(tab, mark, seconds, value, finish)
                        if kept is not None:
                            view.writing = None if view.writing is kept else view.writing
                            if not await kept:  # the guarded write matched no row: lost (its tab was told)
                                raise ViewError("VIEW_UNAVAILABLE", view.app)
                        return value
        except TimeoutError:
            if budget.expired():
                raise ViewError("VIEW_TIMEOUT", view.app, seconds=seconds) from None
            raise

    def _holding(self) -> contextlib.AbstractContextManager[None]:
        """App events wait while a call runs: its round trip to its own tab is not queued behind watchers' work."""
        return self._events.hold() if self._events is not None else contextlib.nullcontext()

    async def _wait_live(
        self, view: ViewRecord, shown_id: str, ctx: CallContext | None = None
    ) -> mcp_types.CallToolResult | None:
        """Return once the view has a tab here (None), or with `ctx` the result of the call on the worker whose tab
        has it; VIEW_OPENING/VIEW_CLOSED when none comes in time (never hangs)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.wait_for_live
        shared = self.transport.shared
        while not view.is_live:
            if view.state is ViewState.REPLACED:
                raise ViewError("VIEW_REPLACED", view.app, view=shown_id)
            if view.state in (ViewState.CLOSED, ViewState.EXPIRED):
                raise ViewError("VIEW_CLOSED", view.app)
            if shared and view.state is ViewState.DISCONNECTED and view.worker is None and view.client is None:
                raise ViewError("VIEW_UNAVAILABLE", view.app)  # released by a worker that died: its tab comes back
            forwarded = None if ctx is None else await self.transport.forward(view, ctx)
            if forwarded is not None:
                return forwarded
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise ViewError("VIEW_OPENING" if view.state is ViewState.PENDING else "VIEW_CLOSED", view.app)
            try:
                async with asyncio.timeout(min(remaining, _FOLLOW) if shared else remaining):
                    await view.changed()
            except TimeoutError:
                pass
            if shared:
                await self.registry.reread(view)  # its row only, by its key
        return None

    def _note(self, caller: Caller) -> None:
        if caller.session_id is not None:
            self.registry.active_sessions.add(caller.session_id)

    # -- expiry -------------------------------------------------------------------------------------------------
    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_interval)
            try:
                await self.sweep(time.time())
            except Exception:
                log.exception("view sweep failed")

    async def sweep(self, now: float) -> None:
        """Expire old pending and closed views; close views whose tab never came back (e.g. after a restart)."""
        s = self.settings
        if self.transport.shared:  # the views this worker may expire or close, by index (never the whole table)
            views = await self.registry.sweepable(now - min(s.pending_expiry, s.closed_expiry, s.return_grace))
        else:
            views = list(self.registry)
        for view in views:
            if view.worker not in (None, self.registry.worker):
                continue  # another worker holds it: only that worker changes its state
            age = now - view.changed_at
            expiry = {ViewState.PENDING: s.pending_expiry, ViewState.CLOSED: s.closed_expiry}.get(view.state)
            if view.state is ViewState.REPLACED:
                expiry = s.closed_expiry
            if expiry is not None and age >= expiry:
                await self.registry.remove(view)
            elif view.state is ViewState.DISCONNECTED and view.client is None and age >= s.return_grace:
                view.set_state(ViewState.CLOSED, now)
                view.worker = None  # held by nobody now: any worker may expire it
                await self.registry.save(view)


def _ignore(_view: ViewRecord) -> None:
    pass


async def _call(function: Callable[..., Any], *args: Any) -> Any:
    result = function(*args)
    return await result if inspect.isawaitable(result) else result
