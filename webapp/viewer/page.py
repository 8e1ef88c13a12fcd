"""One open viewer page: the filtered, live list of calls (left) and the selected call's detail (right)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from nicegui import background_tasks, ui

from webapp.calllog.memory import CallKey, CallRecord
from webapp.calllog.shared import CATCH_UP_AGAIN
from webapp.viewer.auth import Access
from webapp.viewer.call_row import CallRow
from webapp.viewer.filters import Filters, call_ref
from webapp.viewer.result_view import ResultView
from webapp.viewer.service import Viewer
from webapp.viewer.try_panel import TryPanel

__all__ = ["LIST_LIMIT", "ViewerPage", "caller_label"]

LIST_LIMIT = 200
"""Rows shown in the list at most (the newest matching calls)."""


def caller_label(record: CallRecord) -> str:
    """Who called: the principal, else the (masked) MCP session, else the protocol's kind."""
    if record.principal:
        return record.principal
    if record.protocol == "stdio":
        return "stdio"
    return f"session {record.session_id}" if record.session_id else "sessionless"


def _duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 10 else f"{ms:,.0f} ms"


def _call_props(record: CallRecord) -> dict[str, Any]:
    """What the browser draws a call's detail from: its (masked) wire texts, arguments and metadata."""
    meta = [
        ("time", record.time.isoformat(timespec="milliseconds")),
        ("duration", _duration(record.duration_ms)),
        ("caller", caller_label(record)),
        ("protocol", record.protocol),
        ("view", record.view or "—"),
        *((("worker", record.worker),) if record.worker else ()),
    ]
    return {
        "tool": record.tool,
        "is_error": record.is_error,
        "ref": call_ref(record.key),
        "meta": meta,
        "texts": list(record.blocks),
        "arguments": record.arguments,
        "structured": record.structured_content,
    }


class ViewerPage:
    """The widgets and the live feed of one browser tab of the viewer."""

    def __init__(self, viewer: Viewer, access: Access, filters: Filters, selected: CallKey | None) -> None:
        self.viewer = viewer
        self.access = access
        self.filters = filters
        self.selected = selected
        self.rows: dict[CallKey, ui.element] = {}
        self._order: dict[CallKey, tuple[Any, ...]] = {}  # of the rows shown, to place a late record of another worker
        self._try: TryPanel | None = None
        self._record: CallRecord | None = None
        self._detail: ResultView | None = None  # kept while calls are shown: a new one only changes its properties
        self._on_sign_out: Callable[[], None] | None = None

    # -- building -----------------------------------------------------------------------------------------------
    def build(self, *, on_sign_out: Callable[[], None] | None = None) -> None:
        """Build the page; with `on_sign_out`, the header offers to sign out (auth on)."""
        self._on_sign_out = on_sign_out
        calllog = self.viewer.host.calllog
        subscription = calllog.subscribe()  # before the snapshot, so no call falls in between
        records = [record for record in calllog.records() if self.access.may_see(record)]
        self._header()
        with ui.element("div").classes("wv-shell"):
            with ui.element("div").classes("wv-list-pane"):
                self._filters_bar(records)
                self.count = ui.label("").classes("wv-count")
                self.list_box = ui.element("div").classes("wv-list")
                self.empty = ui.label("No calls yet.").classes("wv-empty")
            self.detail = ui.element("div").classes("wv-detail-pane")
        self._fill(records)
        chosen = next((r for r in records if r.key == self.selected), None)
        if chosen is None:
            chosen = next((r for r in reversed(records) if self.filters.matches(r)), None)
        self._show(chosen)
        self.dialogs = ui.element("div")
        client = ui.context.client
        client.on_delete(subscription.close)
        background_tasks.create(self._follow(subscription), name="viewer-feed")
        ui.timer(CATCH_UP_AGAIN, self.viewer.catch_up, once=True)  # those made before every worker knew: they follow

    def _header(self) -> None:
        with ui.header().classes("wv-header items-center"):
            ui.icon("receipt_long").classes("text-xl")
            ui.label("Call viewer").classes("wv-title")
            if scope := self.viewer.scope():
                ui.label(scope).classes("wv-scope")
            with ui.row().classes("wv-links items-center gap-1"):
                for path in self.viewer.links():
                    ui.link(path, path).classes("wv-link")
            ui.space()
            if not self.access.is_local:
                ui.label(self.access.principal or "").classes("wv-principal")
            if self._on_sign_out is not None:
                sign_out = self._on_sign_out
                ui.button(icon="logout", on_click=lambda: sign_out()).props("flat round dense color=white").tooltip(
                    "Sign out"
                )
            ui.button("Try a tool", icon="play_circle", on_click=lambda: self.open_try()).props(
                "unelevated color=white text-color=primary"
            ).classes("wv-try-button")

    def _filters_bar(self, records: list[CallRecord]) -> None:
        names = {tool.name for tool in self.viewer.tools()} | {record.tool for record in records}
        if self.filters.tool:
            names.add(self.filters.tool)
        with ui.element("div").classes("wv-filters"):
            self.tool_filter = ui.select(sorted(names), label="Tool", value=self.filters.tool, clearable=True)
            self.tool_filter.props("dense outlined options-dense").classes("wv-filter-tool")
            self.view_filter = ui.input("View", value=self.filters.view or "").props("dense outlined debounce=300")
            self.session_filter = ui.input("Session", value=self.filters.session or "")
            self.session_filter.props("dense outlined debounce=300")
            self.errors_filter = ui.switch("Errors only", value=self.filters.errors).props("dense")
        for element in (self.tool_filter, self.view_filter, self.session_filter, self.errors_filter):
            element.on_value_change(lambda _e: self._filters_changed())

    def _filters_changed(self) -> None:
        self.filters = dataclasses.replace(
            self.filters,
            tool=self.tool_filter.value,
            view=self.view_filter.value,
            session=self.session_filter.value,
            errors=bool(self.errors_filter.value),
        )
        self._fill([r for r in self.viewer.host.calllog.records() if self.access.may_see(r)])
        self._replace_url()

    def _replace_url(self) -> None:
        query = self.filters.query(None if self.selected is None else call_ref(self.selected))
        ui.navigate.history.replace(f"{self.viewer.path}?{query}" if query else self.viewer.path)

    # -- the list -----------------------------------------------------------------------------------------------
    def _fill(self, records: list[CallRecord]) -> None:
        self.list_box.clear()
        self.rows.clear()
        self._order.clear()
        shown = sorted((record for record in records if self.filters.matches(record)), key=lambda r: r.order)
        with self.list_box:
            for record in reversed(shown[-LIST_LIMIT:]):
                self.rows[record.key] = self._row(record)
                self._order[record.key] = record.order
        self._counted()

    def _counted(self) -> None:
        self.empty.set_visibility(not self.rows)
        self.count.text = f"{len(self.rows)} call{'s' if len(self.rows) != 1 else ''}" + (
            f" (newest {LIST_LIMIT})" if len(self.rows) >= LIST_LIMIT else ""
        )

    def _row(self, record: CallRecord) -> ui.element:
        row = CallRow(
            seq=record.seq,
            status="error" if record.is_error else "ok",
            tool=record.tool,
            duration=_duration(record.duration_ms),
            time=record.time.strftime("%H:%M:%S"),
            caller=caller_label(record),
            view=record.view or "",
            worker=record.worker,
        )
        if record.key == self.selected:
            row.classes("wv-call-selected")
        row.on("click", lambda _e, key=record.key: self.select(key))
        return row

    def add(self, record: CallRecord) -> None:
        """Show a new call in the list, newest first (when it passes the filters): at the top, unless another worker's
        record arrives after newer ones."""
        if not self.filters.matches(record):
            return
        with self.list_box:
            row = self._row(record)
        row.move(target_index=sum(order > record.order for order in self._order.values()))
        self.rows[record.key] = row
        self._order[record.key] = record.order
        while len(self.rows) > LIST_LIMIT:
            oldest = min(self._order, key=self._order.__getitem__)
            del self._order[oldest]
            self.list_box.remove(self.rows.pop(oldest))
        self._counted()
        if self._record is None:
            self._show(record)

    async def _follow(self, subscription: Any) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            async for record in subscription:
                if self.list_box.is_deleted:
                    break
                # not one it shows already (the snapshot's, taken after subscribing); an older one read again from
                # the shared table takes its place in the list
                if record.key not in self.rows and self.access.may_see(record):
                    self.add(record)

    # -- the detail ---------------------------------------------------------------------------------------------
    def select(self, key: CallKey) -> None:
        record = next((r for r in self.viewer.host.calllog.records() if r.key == key), None)
        if record is None or not self.access.may_see(record):
            return
        for known, row in self.rows.items():
            if known == key:
                row.classes("wv-call-selected")
            else:
                row.classes(remove="wv-call-selected")
        self._show(record)
        self._replace_url()

    def _show(self, record: CallRecord | None) -> None:
        self._record = record
        self.selected = record.key if record else None
        if record is not None and self._detail is not None and not self._detail.is_deleted:
            self._detail.show(_call_props(record))
            return
        self.detail.clear()
        self._detail = None
        with self.detail:
            if record is None:
                ui.label("Select a call to see its result.").classes("wv-empty")
                return
            self._detail = ResultView.call(_call_props(record), on_suggest=self.open_try)

    # -- try a tool ---------------------------------------------------------------------------------------------
    def open_try(self, tool: str | None = None) -> None:
        if self._try is None:
            access = self.access

            async def call(name: str, arguments: dict[str, Any]) -> Any:
                return await self.viewer.call(access, name, arguments)

            with self.dialogs:
                self._try = TryPanel(self.viewer.tools(), call, views=lambda: self.viewer.view_choices(access))
        self._try.focus_view = self.filters.view
        self._try.open(tool)
