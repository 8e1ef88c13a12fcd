"""An element whose children update on their own: the tab re-renders the island, not the page around it."""

from __future__ import annotations

from nicegui import ui

__all__ = ["Island"]


class Island(ui.element, component="island.js"):
    """Put elements that change on every call (invisible helpers, counters) inside one: the tab's render of an
    update is then the island's, not that of the enclosing component's whole subtree."""
