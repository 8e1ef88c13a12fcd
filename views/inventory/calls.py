"""Component method calls for one tab, collected while a change is applied and sent as one message."""

from __future__ import annotations

import json
from typing import Any

from nicegui import Client
from nicegui.element import Element

__all__ = ["BrowserCalls"]


class BrowserCalls:
    """What `Element.run_method` sends, one statement per call, so that a change costs one message, not one per
    component it touches."""

    def __init__(self) -> None:
        self._statements: list[str] = []

    def method(self, element: Element, name: str, *args: Any) -> None:
        self._statements.append(f"runMethod({element.id}, {json.dumps(name)}, {json.dumps(args)})")

    def send(self, client: Client) -> None:
        """Queue the calls for the tab now (`run_javascript` would queue them a loop turn later, after the bridge
        has decided whether the call sent the tab anything to confirm)."""
        if self._statements and not client.is_deleted:
            client.outbox.enqueue_message("run_javascript", {"code": ";".join(self._statements)}, client.id)
        self._statements.clear()
