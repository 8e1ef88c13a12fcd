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
        if self._statements:
            client.run_javascript(";".join(self._statements))
            self._statements.clear()
