"""One view at run time (`ViewRecord`): its persisted fields, its life-cycle state, the tab attached to it and its
lock; and the forms its secrets take outside it (masked in logs, a digest for other workers)."""

from __future__ import annotations

import asyncio
import hashlib
from enum import StrEnum
from typing import Any

from nicegui import Client

from webapp.bridge.store import ViewRow
from webapp.core.database import dump_json, load_json

__all__ = ["OPEN_STATES", "ViewRecord", "ViewState", "digest", "mask", "view_digest"]


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


def digest(secret: str) -> bytes:
    """The key a view is indexed by in memory: the SHA-256 of its handle or attach key (the secret itself is then
    compared in constant time)."""
    return hashlib.sha256(secret.encode()).digest()


def view_digest(handle: str) -> str:
    """What other workers and Redis know a view by: a digest of its handle, never the handle (apps.md §14)."""
    return digest(handle).hex()


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
        self.writing: asyncio.Future[bool] | None = None  # several workers: its data's guarded write (False: lost)
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
