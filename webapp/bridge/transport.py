"""The seam between the bridge and other workers (apps.md §14): how a call reaches a view whose tab another worker
holds. `LocalTransport` is one process (nothing is elsewhere); `webapp.cluster` implements it over Redis."""

from __future__ import annotations

from typing import Protocol

import mcp_types

from webapp.bridge.registry import ViewRecord
from webapp.core.context import CallContext

__all__ = ["Forwarded", "LocalTransport", "Transport"]


class Forwarded(Exception):
    """The call ran on the worker holding the view's tab: `result` is its answer, to return as is."""

    def __init__(self, result: mcp_types.CallToolResult) -> None:
        super().__init__("answered by another worker")
        self.result = result


class Transport(Protocol):
    """What the bridge asks about views it does not hold. Failures are `ViewError`s (VIEW_UNAVAILABLE when the
    holder is gone, BRIDGE_UNAVAILABLE when it cannot be reached), raised at once."""

    @property
    def shared(self) -> bool:
        """Whether other workers share the database (the bridge then follows it)."""
        ...

    async def attached(self, view: ViewRecord) -> None:
        """A tab attached here: this worker holds the view now."""
        ...

    def detached(self, view: ViewRecord) -> None:
        """The tab attached here is gone: this worker holds the view no more."""
        ...

    async def may_take(self, view: ViewRecord, guest: bool) -> bool:
        """Whether a tab attaching here may take the view from the tab another worker holds (that worker is asked: it
        detaches its tab, or keeps it when it is a person's and `guest`, a page a host's shell loaded, is not)."""
        ...

    async def forward(self, view: ViewRecord, ctx: CallContext) -> mcp_types.CallToolResult | None:
        """Run the call `ctx` on the worker holding the view's tab when that is another one, and return its result;
        None when the tab is here or nowhere (yet), or has moved on (ask again once the view changed)."""
        ...


class LocalTransport:
    """One process: every view is here or nowhere."""

    shared = False

    async def attached(self, view: ViewRecord) -> None:
        pass

    def detached(self, view: ViewRecord) -> None:
        pass

    async def may_take(self, view: ViewRecord, guest: bool) -> bool:
        return True

    async def forward(self, view: ViewRecord, ctx: CallContext) -> mcp_types.CallToolResult | None:
        return None
