"""What a server gives its inventory views: the store, the app events the store publishes its changes to, and what a
view being built learns about its own tab."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from actions.store import InventoryStore
from views.inventory.shared import SharedStocks
from webapp import AppEvents

__all__ = ["InventoryServices", "NoTabInfo", "TabInfo"]


class TabInfo(Protocol):
    """What a view being built learns about its own tab from the server."""

    def viewer_link(self) -> str | None:
        """The call-log viewer filtered to this view (None when the server has no viewer)."""
        ...

    def opened_by_agent(self) -> bool:
        """Whether an agent opened (or adopted) this view, rather than a person alone."""
        ...


class NoTabInfo:
    """For servers that tell nothing: no viewer link; a view waits for an agent until one acts on it."""

    def viewer_link(self) -> str | None:
        return None

    def opened_by_agent(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class InventoryServices:
    """What a server gives its inventory views: the store, the app events the store publishes its changes to, and
    what a view being built learns about its tab; and the stocks its views share."""

    store: InventoryStore
    events: AppEvents
    tabs: TabInfo = field(default_factory=NoTabInfo)
    shares: SharedStocks = field(default_factory=SharedStocks)
