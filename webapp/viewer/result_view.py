"""A result (or a JSON value) the browser draws from its wire texts with the viewer's bundle at `/static/dist/…`.

The server sends the call's masked texts as one element's properties; the parser and renderer in the bundle
(`static/wire.js`, `static/render/`) turn them into charts, tables and cards, so nothing in a result runs script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nicegui import ui

from webapp.core.static import STATIC_URL, VIEWER_BUNDLE

__all__ = ["ResultView"]


class ResultView(ui.element, component="result_view.js"):
    """A call's result drawn in the browser; suggestion chips call `on_suggest(tool)` when given."""

    def __init__(
        self, texts: Sequence[str], *, raw: bool = False, on_suggest: Callable[[str], None] | None = None
    ) -> None:
        super().__init__()
        self._props["bundle"] = f"{STATIC_URL}/{VIEWER_BUNDLE}"
        self._props["texts"] = list(texts)
        self._props["raw"] = raw
        self._props["suggest"] = on_suggest is not None
        self.classes("wv-result")
        if on_suggest is not None:
            self.on("suggest", lambda event: on_suggest(str(event.args)))

    @classmethod
    def json(cls, value: Any) -> ResultView:
        """A read-only, collapsible JSON tree of `value` (arguments, structured content)."""
        view = cls(())
        view._props["mode"] = "json"
        view._props["value"] = value
        view.classes(replace="wv-json-view")
        return view

    def show_raw(self, raw: bool) -> None:
        """Switch between the drawn blocks and each block's wire text, verbatim."""
        self._props["raw"] = raw
        self.update()
