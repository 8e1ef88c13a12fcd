"""The views of a running server: their life-cycle state, owners, secrets and the tab attached to each.

Secrets are looked up through a digest and compared in constant time; they are persisted through `ViewStore`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Collection, Iterator
from enum import StrEnum
from typing import Any

from nicegui import Client

from webapp.bridge.store import ViewRow, ViewStore
from webapp.core.database import dump_json, load_json

__all__ = ["OPEN_STATES", "ViewRecord", "ViewRegistry", "ViewState", "mask", "view_digest"]


class ViewState(StrEnum):
    PENDING = "pending"
    LIVE = "live"
    DISCONNECTED = "disconnected"
    CLOSED = "closed"
    REPLACED = "replaced"
    EXPIRED = "expired"


OPEN_STATES = frozenset({ViewState.PENDING, ViewState.LIVE, ViewState.DISCONNECTED})


def mask(secret: str) -> str:
    """The only form in which a handle or attach key may be logged."""
    return secret[:6] + "…"


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def view_digest(handle: str) -> str:
    """What other workers and Redis know a view by: a digest of its handle, never the handle (apps.md §14)."""
    return _digest(handle).hex()


def _ignore(_secret: str) -> None:
    pass


class ViewRecord:
    """One view at run time: the persisted fields plus the attached tab (client + app instance) and its lock."""

    def __init__(self, row: ViewRow) -> None:
        self.handle = row.handle
        self.attach_key = row.attach_key
        self.app = row.app
        self.principal = row.principal
        self.session_id = row.session_id
        self.bound = row.bound  # False while a person opened it directly and no caller adopted it
        self.state = ViewState(row.state)
        self.input: dict[str, Any] | None = load_json(row.input)
        self.data: dict[str, Any] = load_json(row.data) or {}
        self.created = row.created
        self.bound_at = row.bound_at
        self.changed_at = row.changed_at
        self.saved_data = row.data
        self.worker = row.worker
        self.client: Client | None = None
        self.instance: object | None = None
        self.pending_update: dict[str, Any] | None = None  # arguments to deliver to the observer once attached
        self.lock = asyncio.Lock()
        self._changed = asyncio.Event()

    def __repr__(self) -> str:
        return f"<view {self.app} {mask(self.handle)} {self.state}>"

    @property
    def traced(self) -> dict[str, str]:
        """Its attributes in a span: the app and the handle masked."""
        return {"webapp.app": self.app, "webapp.view": mask(self.handle)}

    @property
    def is_open(self) -> bool:
        return self.state in OPEN_STATES

    @property
    def is_live(self) -> bool:
        return self.state is ViewState.LIVE and self.client is not None and self.instance is not None

    def set_state(self, state: ViewState, now: float) -> bool:
        """Change the state and wake every waiter; False when it already was `state`."""
        if self.state is state:
            return False
        self.state = state
        self.changed_at = now
        self.notify()
        return True

    def notify(self) -> None:
        """Wake every coroutine waiting in `changed()`."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def changed(self) -> None:
        """Return at the next state or attachment change (callers bound the wait)."""
        await self._changed.wait()

    def row(self) -> ViewRow:
        return ViewRow(
            handle=self.handle,
            attach_key=self.attach_key,
            app=self.app,
            principal=self.principal,
            session_id=self.session_id,
            bound=self.bound,
            state=self.state.value,
            input=None if self.input is None else dump_json(self.input),
            data=self.saved_data,
            created=self.created,
            bound_at=self.bound_at,
            changed_at=self.changed_at,
            worker=self.worker,
        )

    def follow(self, row: ViewRow) -> None:
        """Take the stored fields of a view this worker does not hold (another worker changed them)."""
        state = ViewState(row.state)
        self.principal, self.session_id, self.bound, self.worker = row.principal, row.session_id, row.bound, row.worker
        self.bound_at, self.saved_data = row.bound_at, row.data
        self.input, self.data = load_json(row.input), load_json(row.data) or {}
        if state is not self.state:
            self.set_state(state, row.changed_at)


class ViewRegistry:
    """All views not yet expired, indexed by the digests of their handle and attach key."""

    def __init__(
        self,
        store: ViewStore,
        *,
        on_secret: Callable[[str], None] | None = None,
        on_forget: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self._on_secret: Callable[[str], None] = on_secret or _ignore
        self._on_forget: Callable[[str], None] = on_forget or _ignore  # an expired view's secrets grant nothing
        self._by_handle: dict[bytes, ViewRecord] = {}
        self._by_key: dict[bytes, ViewRecord] = {}
        self.active_sessions: set[str] = set()  # MCP sessions seen since start and not ended
        self.worker: str | None = None
        """This worker's id when several share the database (set before `load`); None: one process."""
        self._apps: Collection[str] | None = None
        self._loaded = False

    def load(self, apps: Collection[str] | None = None, now: float | None = None) -> None:
        """Restore the stored views of `apps` (all when None), once; those that had a tab are `disconnected` until
        the tab re-attaches. Rows of other apps stay untouched in the database."""
        self._store.open()
        if self._loaded:
            return
        self._loaded = True
        self._apps = apps
        now = time.time() if now is None else now
        for row in self._store.load():
            if apps is not None and row.app not in apps:
                continue
            view = ViewRecord(row)
            mine = view.worker is None or view.worker == self.worker  # a worker restores only its own tabs' views
            if not mine:
                continue  # another worker's: read by key or by its caller when a call or a tab needs it
            if view.state in (ViewState.LIVE, ViewState.DISCONNECTED):
                view.state, view.changed_at = ViewState.DISCONNECTED, now
                self._store.save(view.row(), writer=self.worker)
            self._index(view)

    def refresh_caller(self, principal: str | None, session_id: str | None, *, unbound: bool) -> None:
        """Several workers: follow the stored rows routing may pick for a caller (`ViewStore.of_caller`, by index);
        a view of that kind known here but no longer stored as such is dropped from memory (read again by key when
        named). The views whose tab is attached here keep their own state."""
        seen: set[bytes] = set()
        for row in self._store.of_caller(principal, session_id, unbound=unbound):
            if self._apps is not None and row.app not in self._apps:
                continue
            digest = _digest(row.handle)
            seen.add(digest)
            view = self._by_handle.get(digest)
            if view is None:
                self._index(ViewRecord(row))
            elif view.client is None:
                view.follow(row)
        for digest, view in list(self._by_handle.items()):
            routable = (view.principal == principal and view.is_open) or (
                session_id is not None and view.session_id == session_id
            )
            routable = routable or ((principal is None or unbound) and view.principal is None and view.is_open)
            if routable and digest not in seen and view.client is None:
                self._drop(view)

    def reread(self, view: ViewRecord) -> None:
        """Several workers: follow the stored row of `view` (read by its key); a view attached here keeps its own
        state, one no longer stored is expired."""
        if view.client is not None:
            return
        row = self._store.find("handle", view.handle)
        if row is None:
            self._forget(view)
        else:
            view.follow(row)

    def holder(self, view: ViewRecord) -> str | None:
        """Several workers: the worker the stored row of `view` names (read by its key; None: nobody, or no row)."""
        row = self._store.find("handle", view.handle)
        return None if row is None else row.worker

    def refresh_one(self, secret: str, column: str = "handle") -> None:
        """Several workers: follow the stored row of the view whose handle (or attach key) is `secret` only, read by
        that key; a view attached here keeps its own state, one unknown here is read by `by_handle`/`by_attach_key`."""
        view = (self._by_handle if column == "handle" else self._by_key).get(_digest(secret))
        if view is not None:
            self.reread(view)

    def close(self) -> None:
        """Close the database (views stay in memory; `load()` opens it again)."""
        self._store.close()

    def _index(self, view: ViewRecord) -> None:
        self._by_handle[_digest(view.handle)] = view
        self._by_key[_digest(view.attach_key)] = view
        self._on_secret(view.handle)
        self._on_secret(view.attach_key)

    def __iter__(self) -> Iterator[ViewRecord]:
        return iter(list(self._by_handle.values()))

    def __len__(self) -> int:
        return len(self._by_handle)

    def create(
        self,
        app: str,
        *,
        principal: str | None,
        session_id: str | None,
        bound: bool,
        arguments: dict[str, Any] | None,
        now: float | None = None,
    ) -> ViewRecord:
        """A new `pending` view with fresh secrets (128-bit handle, 256-bit attach key), stored at once."""
        now = time.time() if now is None else now
        row = ViewRow(
            handle=secrets.token_urlsafe(16),
            attach_key=secrets.token_urlsafe(32),
            app=app,
            principal=principal,
            session_id=session_id,
            bound=bound,
            state=ViewState.PENDING.value,
            input=None if arguments is None else dump_json(arguments),
            data="{}",
            created=now,
            bound_at=now,
            changed_at=now,
        )
        view = ViewRecord(row)
        self._index(view)
        self._store.save(row)
        return view

    def by_handle(self, handle: str) -> ViewRecord | None:
        view = self._by_handle.get(_digest(handle)) or self._stored("handle", handle)
        return view if view is not None and hmac.compare_digest(view.handle, handle) else None

    def by_attach_key(self, key: str) -> ViewRecord | None:
        view = self._by_key.get(_digest(key)) or self._stored("attach_key", key)
        return view if view is not None and hmac.compare_digest(view.attach_key, key) else None

    def by_digest(self, digest: str) -> ViewRecord | None:
        """The view whose `view_digest` is `digest` (a call forwarded by another worker names it so)."""
        try:
            return self._by_handle.get(bytes.fromhex(digest))
        except ValueError:
            return None

    def _stored(self, column: str, secret: str) -> ViewRecord | None:
        """Several workers: a view another worker created since this one loaded (read from the database)."""
        if self.worker is None or not secret:
            return None
        row = self._store.find(column, secret)
        if row is None or (self._apps is not None and row.app not in self._apps):
            return None
        view = ViewRecord(row)
        self._index(view)
        return view

    def save(self, view: ViewRecord) -> None:
        """Persist every field (state, binding, input, data); with several workers only while nobody else holds
        the view."""
        view.saved_data = dump_json(view.data)
        self._store.save(view.row(), writer=self.worker)

    def claim(self, view: ViewRecord) -> None:
        """A tab attached here: this worker holds the view from now on (newest tab wins), and saves it."""
        view.worker = self.worker
        view.saved_data = dump_json(view.data)
        self._store.save(view.row())

    def orphan(self, view: ViewRecord) -> None:
        """The worker that held `view` is gone: it is disconnected and held by nobody, so its tab may attach
        anywhere, an opening call may reuse it and the sweeps close it when no tab comes back."""
        if view.worker is None or view.worker == self.worker or view.client is not None:
            return
        now = time.time()
        if view.state in (ViewState.LIVE, ViewState.DISCONNECTED):
            self._store.release(view.handle, view.worker, ViewState.DISCONNECTED.value, now)
            view.set_state(ViewState.DISCONNECTED, now)
        view.worker = None

    def reclaim(self) -> int:
        """Several workers: take back the rows of views whose tab is live here but that another worker released (it
        took this worker for gone); how many. A view's tab, while attached, keeps it open."""
        taken = 0
        for handle in self._store.released():
            view = self._by_handle.get(_digest(handle))
            if view is not None and view.is_live and view.worker == self.worker:
                view.saved_data = dump_json(view.data)
                self._store.save(view.row(), writer=self.worker)  # never over a newer holder's row
                taken += 1
        return taken

    def sweepable(self, before: float) -> list[ViewRecord]:
        """Several workers: the views nobody or this worker holds, not live and unchanged since `before` (by index);
        those known here first follow their row, the others are read without being kept."""
        found: list[ViewRecord] = []
        for row in self._store.sweepable(self.worker or "", before):
            if self._apps is not None and row.app not in self._apps:
                continue
            view = self._by_handle.get(_digest(row.handle))
            if view is None:
                view = ViewRecord(row)
            elif view.client is None:
                view.follow(row)
            found.append(view)
        return found

    def holders(self) -> list[str]:
        """Several workers: the other workers that hold live or disconnected views (stored)."""
        return self._store.holders(self.worker or "")

    def orphan_worker(self, worker: str) -> int:
        """`worker` is gone: every view it held is disconnected and held by nobody (stored, and here); how many."""
        now = time.time()
        released = self._store.release_worker(worker, now)
        for view in self:
            if view.worker == worker and view.client is None:
                if view.state in (ViewState.LIVE, ViewState.DISCONNECTED):
                    view.set_state(ViewState.DISCONNECTED, now)
                view.worker = None
        return released

    def save_data(self, view: ViewRecord) -> bool:
        """Persist the view's own data if it changed since the last write; whether it wrote."""
        text = dump_json(view.data)
        if text == view.saved_data:
            return False
        view.saved_data = text
        self._store.save_data(view.handle, text, writer=self.worker)
        return True

    def remove(self, view: ViewRecord) -> None:
        """Forget an expired view (memory and database); its handle and key then match nothing."""
        self._store.delete(view.handle, writer=self.worker)
        self._forget(view)

    def _drop(self, view: ViewRecord) -> None:
        """Stop keeping `view` in memory (it still exists; its row is read again when it is named)."""
        self._by_handle.pop(_digest(view.handle), None)
        self._by_key.pop(_digest(view.attach_key), None)

    def _forget(self, view: ViewRecord) -> None:
        self._drop(view)
        view.set_state(ViewState.EXPIRED, time.time())
        self._on_forget(view.handle)
        self._on_forget(view.attach_key)
