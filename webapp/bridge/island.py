"""An element whose children update on their own: the tab re-renders the island, not the page around it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from nicegui import Client, ui
from nicegui.element import Element

__all__ = ["Island", "layout_part"]

E = TypeVar("E", bound=Element)


class Island(ui.element, component="island.js"):
    """Put elements that change on every call (invisible helpers, counters) inside one: the tab's render of an
    update is then the island's, not that of the enclosing component's whole subtree."""


def layout_part(client: Client, kind: type[E], make: Callable[[], E], *, hidden: bool = True) -> E:
    """The tab's one element of `kind`, made by `make()` on first use in an island of its own in the tab's layout
    (outside the content a rebuild clears); `hidden`: the island is not displayed."""
    for island in client.layout.default_slot.children:
        if isinstance(island, Island):
            for child in island.default_slot.children:
                if isinstance(child, kind):
                    return child
    with client.layout, Island().classes("hidden" if hidden else ""):
        return make()
