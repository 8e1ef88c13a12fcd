"""Which view a call reaches (apps.md §6) and which view an opening call reuses or adopts (apps.md §4).

Decisions over the registry (with several workers, on the database's newest rows): no waiting, no NiceGUI.
"""

from __future__ import annotations

from webapp.bridge.errors import ViewError
from webapp.bridge.registry import ViewRecord, ViewRegistry, ViewState
from webapp.core.context import Caller
from webapp.core.tracing import span

__all__ = ["Router"]


class Router:
    """Applies the routing rules; `local_mode` (loopback, auth off) enables the unbound fallback and adoption."""

    def __init__(self, registry: ViewRegistry, *, local_mode: bool) -> None:
        self._registry = registry
        self.local_mode = local_mode

    def by_id(self, app: str, caller: Caller, view_id: str) -> ViewRecord:
        """Rule 1: the view named by `_view`, if this caller may reach it; else VIEW_UNKNOWN (one text for all)."""
        view = self._registry.by_handle(view_id)
        if view is None or view.app != app or not self.may_use(caller, view):
            raise ViewError("VIEW_UNKNOWN", app, view=view_id)
        return view

    def of_session(self, app: str, caller: Caller) -> ViewRecord | None:
        """Rule 2: the view most recently bound to the caller's MCP session (by the same principal)."""
        if caller.session_id is None:
            return None
        mine = [
            view
            for view in self._registry
            if view.app == app and view.session_id == caller.session_id and view.principal == caller.principal
        ]
        return max(mine, key=lambda view: view.bound_at, default=None)

    def candidates(self, app: str, caller: Caller) -> list[ViewRecord]:
        """Rule 3: the caller's open views of `app` (the principal's; in local mode the unbound ones)."""
        if caller.principal is not None:
            return [view for view in self._open(app) if view.principal == caller.principal]
        if not self.local_mode:
            return []  # no identity of its own: it must name the view with _view (or use its session)
        active = self._registry.active_sessions
        return [
            view
            for view in self._open(app)
            if view.principal is None and (view.session_id is None or view.session_id not in active)
        ]

    async def reach(
        self, app: str, caller: Caller, view_id: str | None, *, target: str | None, shared: bool
    ) -> ViewRecord:
        """The view an action or update call goes to, in a span of its own: the one another worker forwarded it for
        (`target`, its digest), else `route`'s, with several workers (`shared`) after reading the newest rows."""
        with span(f"webapp route {app}", attributes={"webapp.app": app}) as routing:
            if target is not None:
                view = self.forwarded(app, caller, target)  # attached here: this worker's record is the truth
            else:
                if shared and view_id is not None:
                    await self._registry.refresh_one(view_id)  # the named view's row only
                elif shared:
                    await self.follow(caller)  # routing without `_view`: the caller's rows, by index
                view = self.route(app, caller, view_id)
            routing.set_attributes(view.traced)
        return view

    async def follow(self, caller: Caller) -> None:
        """Several workers: read the stored views that rules 2 and 3 (and adoption) may pick for `caller`."""
        await self._registry.refresh_caller(caller.principal, caller.session_id, unbound=self.local_mode)

    def forwarded(self, app: str, caller: Caller, target: str) -> ViewRecord:
        """The view a call forwarded by another worker names by its digest; the caller's principal checked here
        too."""
        view = self._registry.by_digest(target)
        if view is None or view.app != app or not self.may_use(caller, view):
            raise ViewError("VIEW_UNKNOWN", app)  # without the id: the forwarding worker shows the caller's own
        return view

    def route(self, app: str, caller: Caller, view_id: str | None) -> ViewRecord:
        """The view an action or update call goes to, or the ViewError saying why there is none."""
        if view_id is not None:
            return self.by_id(app, caller, view_id)
        view = self.of_session(app, caller)
        if view is not None:
            return view
        found = self.candidates(app, caller)
        if len(found) == 1:
            return found[0]
        raise ViewError("VIEW_AMBIGUOUS" if found else "VIEW_NOT_OPEN", app)

    def reusable(self, app: str, caller: Caller) -> ViewRecord | None:
        """Opening, step 2: exactly one pending or live view of the caller, else None (never an error)."""
        view = self.of_session(app, caller)
        if view is not None and view.is_open:
            return view
        found = self.candidates(app, caller)
        if caller.apps:  # an inline frame never takes over a tab a person opened (apps.md §13)
            found = [view for view in found if view.bound]
        return found[0] if len(found) == 1 else None

    def adoptable(self, app: str) -> ViewRecord | None:
        """Opening, step 3 (local mode): exactly one live view of `app` that a person opened and nobody adopted."""
        if not self.local_mode:
            return None
        found = [view for view in self._open(app) if view.state is ViewState.LIVE and not view.bound]
        return found[0] if len(found) == 1 else None

    def owned(self, caller: Caller) -> list[ViewRecord]:
        """The caller's open views of every app (for the per-caller limit): the principal's with auth on; else the
        ones its MCP session opened; a sessionless caller without auth owns the bound views of nobody's session."""
        views = [view for view in self._registry if view.is_open]
        if caller.principal is not None:
            return [view for view in views if view.principal == caller.principal]
        return [
            view
            for view in views
            if view.principal is None and view.session_id == caller.session_id and (view.bound or view.session_id)
        ]

    def _open(self, app: str) -> list[ViewRecord]:
        return [view for view in self._registry if view.app == app and view.is_open]

    def may_use(self, caller: Caller, view: ViewRecord) -> bool:
        """Auth on: a principal reaches only its own views; auth off: the id itself is the capability."""
        return caller.principal is None or view.principal == caller.principal
