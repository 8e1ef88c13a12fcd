"""A result, or a call's detail, drawn in the browser from its wire texts by the bundle at `/static/dist/viewer.js`.

The server sends the call's masked texts as one element's properties; the parser and renderer in the bundle
(`static/wire.js`, `static/render/`) turn them into charts, tables and cards, so nothing in a result runs script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from nicegui import ui

from webapp.core.static import VIEWER_BUNDLE, bundle_url

__all__ = ["ResultView"]


class ResultView(ui.element, component="result_view.js"):
    """A call's result drawn in the browser; suggestion chips call `on_suggest(tool)` when given."""

    def __init__(self, texts: Sequence[str], *, on_suggest: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self._props["bundle"] = bundle_url(VIEWER_BUNDLE)
        self._props["texts"] = list(texts)
        self._props["suggest"] = on_suggest is not None
        self.classes("wv-result")
        if on_suggest is not None:
            self.on("suggest", lambda event: on_suggest(str(event.args)))

    @classmethod
    def call(cls, call: dict[str, Any], *, on_suggest: Callable[[str], None] | None = None) -> ResultView:
        """A call's detail: its header (`tool`, `is_error`, `ref`, `meta` as name/value pairs, a raw switch), its result
        from `texts`, and its `arguments` and `structured` content as JSON trees."""
        view = cls((), on_suggest=on_suggest)
        view._props["mode"] = "call"
        view._props["call"] = call
        view.classes(replace="wv-call-detail")
        return view

    def show(self, call: dict[str, Any]) -> None:
        """Show another call in this detail (as `call()` takes it)."""
        self._props["call"] = call
        self.update()
