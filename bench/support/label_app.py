"""The framework's floor for `bench.inventory`'s fan-out (`--app bench.support.label_app:build`): a live view whose
whole update per change is one label's text, and a plain tool `tick` that publishes one change to the views' app
events topic, as the inventory's store publishes a stock change to its warehouse's views."""

from __future__ import annotations

import itertools
from typing import ClassVar

from nicegui import ui

from webapp import AppEvents, Event, Tool, WebApp, install_apps, mcp_app

__all__ = ["TOPIC", "LabelView", "build"]

TOPIC = "bench/ticks"


@mcp_app(description="Shows the number of the newest tick.", route="/label")
class LabelView:
    """One label, subscribed like an inventory view (`AppEvents.subscribe_batches`): each batch of ticks sets its
    text to the newest one's number."""

    events: ClassVar[AppEvents]

    def __init__(self) -> None:
        self.label = ui.label("0").props("data-testid=tick")
        self._subscription = self.events.subscribe_batches(TOPIC, self._ticked)

    def _ticked(self, events: tuple[Event, ...]) -> None:
        if self.label.is_deleted:  # the tab is gone: this instance is too
            self._subscription.close()
            return
        self.label.text = str(events[-1].payload)


def build(webapp: WebApp) -> None:
    """The label view at `/label` (its events bound to the server's) and the `tick` tool."""
    install_apps(webapp, type("LabelView", (LabelView,), {"events": webapp.events, "__module__": __name__}))
    ticks = itertools.count(1)

    def tick() -> str:
        number = next(ticks)
        return f"Tick {number} went to {webapp.events.publish(TOPIC, number)} views."

    webapp.add_tool(
        Tool("tick", description="Publishes one tick: every open label view shows its number.", handler=tick)
    )
