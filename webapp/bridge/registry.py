"""The views of a running server (`ViewRecord`s): found by their secrets, persisted through `ViewStore`, and with
several workers read from the database by key or index.

Secrets are looked up through a digest and compared in constant time.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator
from typing import Any, Literal

from webapp.bridge.record import OPEN_STATES, ViewRecord, ViewState, mask, view_digest
from webapp.bridge.record import digest as _digest
from webapp.bridge.store import ViewRow, ViewStore
from webapp.core.database import dump_json

__all__ = ["OPEN_STATES", "Column", "ViewRecord", "ViewRegistry", "ViewState", "mask", "view_digest"]

FOREIGN_LIMIT = 1000
"""Other workers' views a worker keeps in memory at most (read in when a call or a tab names them), the least
recently named dropped first: memory stays bounded whatever the cluster's views."""

Column = Literal["handle", "attach_key"]
"""The secret a view is looked up by."""


def _ignore(_secret: str) -> None:
    pass


class ViewRegistry:
    """All views not yet expired, indexed by the digests of their handle and attach key."""

    def __init__(
        self,
        store: ViewStore,
        *,
        on_secret: Callable[[str], None] | None = None,
        on_forget: Callable[[str], None] | None = None,
        foreign_limit: int = FOREIGN_LIMIT,
    ) -> None:
        self._store = store
        self._foreign: OrderedDict[bytes, None] = OrderedDict()  # other workers' views read in, least recent first
        self._foreign_limit = foreign_limit
        self._on_secret: Callable[[str], None] = on_secret or _ignore
        self._on_forget: Callable[[str], None] = on_forget or _ignore  # an expired view's secrets grant nothing
        self._by_handle: dict[bytes, ViewRecord] = {}
        self._by_key: dict[bytes, ViewRecord] = {}
        self.active_sessions: set[str] = set()  # MCP sessions seen since start and not ended
        self.worker: str | None = None
        """This worker's id when several share the database (set before `load`); None: one process."""
        self.on_lost: Callable[[ViewRecord], None] = _ignore_view
        """Called when a guarded write of a view's data matched no row: another worker holds the view (its tab here
        is told; the bridge sets it)."""
        self.on_data_changed: Callable[[ViewRecord], None] = _ignore_view
        """Called when a view's own data changed and is being saved (its resource's subscribers are told)."""
        self._apps: Collection[str] | None = None
        self._loaded = False

    async def load(self, apps: Collection[str] | None = None, now: float | None = None) -> None:
        """Restore the stored views of `apps` (all when None), once; those that had a tab are `disconnected` until
        the tab re-attaches. Rows of other apps stay untouched in the database."""
        await self._store.open()
        if self._loaded:
            return
        self._loaded = True
        self._apps = apps
        now = time.time() if now is None else now
        for row in await self._store.load():
            if apps is not None and row.app not in apps:
                continue
            view = ViewRecord(row)
            mine = view.worker is None or view.worker == self.worker  # a worker restores only its own tabs' views
            if not mine:
                continue  # another worker's: read by key or by its caller when a call or a tab needs it
            if view.state in (ViewState.LIVE, ViewState.DISCONNECTED):
                view.state, view.changed_at = ViewState.DISCONNECTED, now
                self._store.save_soon(view.row(), writer=self.worker)
            self._index(view)

    async def refresh_caller(self, principal: str | None, session_id: str | None, *, unbound: bool) -> None:
        """Several workers: follow the stored rows routing may pick for a caller (`ViewStore.of_caller`, by index);
        a view of that kind known here but no longer stored as such is dropped from memory (read again by key when
        named). The views whose tab is attached here keep their own state."""
        seen: set[bytes] = set()
        for row in await self._store.of_caller(principal, session_id, unbound=unbound):
            if self._apps is not None and row.app not in self._apps:
                continue
            digest = _digest(row.handle)
            seen.add(digest)
            view = self._by_handle.get(digest)
            if view is None:
                self._read_in(ViewRecord(row))
            elif view.client is None:
                view.follow(row)
        for digest, view in list(self._by_handle.items()):
            routable = (view.principal == principal and view.is_open) or (
                session_id is not None and view.session_id == session_id
            )
            routable = routable or ((principal is None or unbound) and view.principal is None and view.is_open)
            if routable and digest not in seen and view.client is None:
                self._drop(view)

    async def reread(self, view: ViewRecord) -> None:
        """Several workers: follow the stored row of `view` (read by its key); a view attached here keeps its own
        state, one no longer stored is expired."""
        if view.client is not None:
            return
        row = await self._store.find("handle", view.handle)
        if row is None:
            self._forget(view)
        else:
            view.follow(row)

    async def holder(self, view: ViewRecord) -> str | None:
        """Several workers: the worker the stored row of `view` names (read by its key; None: nobody, or no row)."""
        row = await self._store.find("handle", view.handle)
        return None if row is None else row.worker

    async def refresh_one(self, secret: str, column: Column = "handle") -> None:
        """Several workers: follow the stored row of the view whose handle (or attach key) is `secret` only, read by
        that key; a view attached here keeps its own state, one unknown here (another worker created it since this one
        loaded) is read in."""
        view = (self._by_handle if column == "handle" else self._by_key).get(_digest(secret))
        if view is not None:
            await self.reread(view)
        elif self.worker is not None and secret:
            await self._stored(column, secret)

    async def lookup(self, secret: str, column: Column = "handle") -> ViewRecord | None:
        """The view whose handle (or attach key) is `secret`; with several workers after reading its stored row
        (`refresh_one`). `by_handle` and `by_attach_key` look in memory only."""
        if self.worker is not None and secret:
            await self.refresh_one(secret, column)
        found = self.by_handle(secret) if column == "handle" else self.by_attach_key(secret)
        self._seen_foreign(found)
        return found

    async def flush(self) -> None:
        """Return once the writes handed over without waiting (`save_soon`, `save_data_soon`) have run or failed."""
        await self._store.flush()

    async def close(self) -> None:
        """Close the database once the writes handed over have run (views stay in memory; `load()` opens it again)."""
        await self._store.close()

    def _index(self, view: ViewRecord) -> None:
        self._by_handle[_digest(view.handle)] = view
        self._by_key[_digest(view.attach_key)] = view
        self._on_secret(view.handle)
        self._on_secret(view.attach_key)

    def _read_in(self, view: ViewRecord) -> None:
        """Index another worker's view read from the database, kept among the `foreign_limit` most recently named
        (an older one is dropped, its secrets forgotten here; it is read again when named)."""
        self._index(view)
        self._seen_foreign(view)
        while len(self._foreign) > self._foreign_limit:
            oldest = self._by_handle.get(self._foreign.popitem(last=False)[0])
            if oldest is not None and oldest.client is None:
                self._drop(oldest)
                self._on_forget(oldest.handle)
                self._on_forget(oldest.attach_key)

    def _seen_foreign(self, view: ViewRecord | None) -> None:
        if view is not None and view.worker is not None and view.worker != self.worker and view.client is None:
            self._foreign[_digest(view.handle)] = None
            self._foreign.move_to_end(_digest(view.handle))

    def __iter__(self) -> Iterator[ViewRecord]:
        return iter(list(self._by_handle.values()))

    def __len__(self) -> int:
        return len(self._by_handle)

    async def create(
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
        await self._store.save(row)
        view = ViewRecord(row)
        self._index(view)
        return view

    def by_handle(self, handle: str) -> ViewRecord | None:
        """The view with this handle, known here (with several workers, `lookup` reads another worker's first)."""
        view = self._by_handle.get(_digest(handle))
        return view if view is not None and hmac.compare_digest(view.handle, handle) else None

    def by_attach_key(self, key: str) -> ViewRecord | None:
        """The view with this attach key, known here (with several workers, `lookup` reads another worker's first)."""
        view = self._by_key.get(_digest(key))
        return view if view is not None and hmac.compare_digest(view.attach_key, key) else None

    def by_digest(self, digest: str) -> ViewRecord | None:
        """The view whose `view_digest` is `digest` (a call forwarded by another worker names it so)."""
        try:
            return self._by_handle.get(bytes.fromhex(digest))
        except ValueError:
            return None

    async def _stored(self, column: Column, secret: str) -> None:
        """Several workers: read in a view another worker created since this one loaded."""
        row = await self._store.find(column, secret)
        if row is None or (self._apps is not None and row.app not in self._apps):
            return
        if _digest(row.handle) not in self._by_handle:  # unless another lookup read it in meanwhile
            self._read_in(ViewRecord(row))

    async def save(self, view: ViewRecord) -> None:
        """Persist every field (state, binding, input, data); with several workers only while nobody else holds
        the view."""
        view.saved_data = dump_json(view.data)
        await self._store.save(view.row(), writer=self.worker)

    def save_soon(self, view: ViewRecord) -> None:
        """`save` handed to the store's thread without waiting (in order with the other writes; a failure is logged):
        for callers that cannot wait (a tab's socket events)."""
        view.saved_data = dump_json(view.data)
        self._store.save_soon(view.row(), writer=self.worker)

    async def claim(self, view: ViewRecord) -> None:
        """A tab attached here: this worker holds the view from now on (newest tab wins), and saves it."""
        self._foreign.pop(_digest(view.handle), None)
        view.worker = self.worker
        view.saved_data = dump_json(view.data)
        await self._store.save(view.row())

    async def orphan(self, view: ViewRecord) -> None:
        """The worker that held `view` is gone: it is disconnected and held by nobody, so its tab may attach
        anywhere, an opening call may reuse it and the sweeps close it when no tab comes back."""
        if view.worker is None or view.worker == self.worker or view.client is not None:
            return
        now = time.time()
        if view.state in (ViewState.LIVE, ViewState.DISCONNECTED):
            await self._store.release(view.handle, view.worker, ViewState.DISCONNECTED.value, now)
            view.set_state(ViewState.DISCONNECTED, now)
        view.worker = None

    async def reclaim(self) -> int:
        """Several workers: take back the rows of views whose tab is live here but that another worker released (it
        took this worker for gone); how many. A view's tab, while attached, keeps it open."""
        taken = 0
        for handle in await self._store.released():
            view = self._by_handle.get(_digest(handle))
            if view is not None and view.is_live and view.worker == self.worker:
                await self.save(view)  # never over a newer holder's row
                taken += 1
        return taken

    async def sweepable(self, before: float) -> list[ViewRecord]:
        """Several workers: the views nobody or this worker holds, not live and unchanged since `before` (by index);
        those known here first follow their row, the others are read without being kept."""
        found: list[ViewRecord] = []
        for row in await self._store.sweepable(self.worker or "", before):
            if self._apps is not None and row.app not in self._apps:
                continue
            view = self._by_handle.get(_digest(row.handle))
            if view is None:
                view = ViewRecord(row)
            elif view.client is None:
                view.follow(row)
            found.append(view)
        return found

    async def holders(self) -> list[str]:
        """Several workers: the other workers that hold live or disconnected views (stored)."""
        return await self._store.holders(self.worker or "")

    async def orphan_worker(self, worker: str) -> int:
        """`worker` is gone: every view it held is disconnected and held by nobody (stored, and here); how many."""
        now = time.time()
        released = await self._store.release_worker(worker, now)
        for view in self:
            if view.worker == worker and view.client is None:
                if view.state in (ViewState.LIVE, ViewState.DISCONNECTED):
                    view.set_state(ViewState.DISCONNECTED, now)
                view.worker = None
        return released

    async def taken_elsewhere(self) -> list[ViewRecord]:
        """Several workers: the views whose tab is here but whose row another worker's attach names now (a tab there
        took the view while this worker could not be told), read by key."""
        mine = [view for view in self if view.client is not None and view.worker == self.worker]
        if not mine or self.worker is None:
            return []
        taken = set(await self._store.held_elsewhere([view.handle for view in mine], self.worker))
        return [view for view in mine if view.handle in taken]

    def keep_data(self, view: ViewRecord) -> asyncio.Future[bool] | None:
        """Persist the view's own data if it changed since the last write: handed over without waiting in one
        process (None); with several workers the guarded write in flight, the newest of the view's (`view.writing`),
        whose False says that it matched no row: another worker holds the view, which was lost here (`on_lost`)."""
        if self.worker is None:
            self.save_data_soon(view)
            return None
        text = dump_json(view.data)
        if text != view.saved_data:
            view.saved_data = text
            self.on_data_changed(view)
            writing = view.writing = asyncio.ensure_future(self._store.save_data(view.handle, text, writer=self.worker))

            def lost(done: asyncio.Future[bool]) -> None:
                if not done.cancelled() and done.exception() is None and not done.result():
                    self.on_lost(view)

            writing.add_done_callback(lost)
        return view.writing

    def save_data_soon(self, view: ViewRecord) -> bool:
        """Persist the view's own data if it changed since the last write, handed to the store's thread without
        waiting (in order with the other writes; a failure is logged); whether it changed."""
        text = dump_json(view.data)
        if text == view.saved_data:
            return False
        view.saved_data = text
        self.on_data_changed(view)
        self._store.save_data_soon(view.handle, text, writer=self.worker)
        return True

    async def remove(self, view: ViewRecord) -> None:
        """Forget an expired view (memory and database); its handle and key then match nothing."""
        await self._store.delete(view.handle, writer=self.worker)
        self._forget(view)

    def _drop(self, view: ViewRecord) -> None:
        """Stop keeping `view` in memory (it still exists; its row is read again when it is named)."""
        self._foreign.pop(_digest(view.handle), None)
        self._by_handle.pop(_digest(view.handle), None)
        self._by_key.pop(_digest(view.attach_key), None)

    def _forget(self, view: ViewRecord) -> None:
        self._drop(view)
        view.set_state(ViewState.EXPIRED, time.time())
        self._on_forget(view.handle)
        self._on_forget(view.attach_key)


def _ignore_view(_view: ViewRecord) -> None:
    pass
