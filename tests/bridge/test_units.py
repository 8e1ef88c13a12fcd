"""The bridge's decisions without a browser: routing rules, opening, expiry sweeps, persistence and app tool schemas.

Real objects throughout: a real database (the persistence tests on SQLite and Postgres), the real registry, router
and bridge (views here never get a tab).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from webapp.apps.definition import McpAppUpdateEvent, mcp_app, mcp_app_action
from webapp.apps.naming import collect_app
from webapp.bridge.app_tools import app_tools
from webapp.bridge.dispatch import Bridge, BridgeSettings
from webapp.bridge.errors import ViewError
from webapp.bridge.registry import ViewRecord, ViewRegistry, ViewState
from webapp.bridge.routing import Router
from webapp.bridge.store import ViewRow, ViewStore
from webapp.core.context import Caller
from webapp.responses.presenter import Presenter

SESSIONLESS = Caller(principal=None, session_id=None, protocol="2026-07-28")


def legacy(session: str, principal: str | None = None) -> Caller:
    return Caller(principal=principal, session_id=session, protocol="2025-11-25")


async def registry(target: Path | str, secrets: list[str] | None = None) -> ViewRegistry:
    """A loaded registry of the views in `target` (a folder holding `views.db`, or a database URL)."""
    views = ViewRegistry(
        ViewStore(target / "views.db" if isinstance(target, Path) else target),
        on_secret=None if secrets is None else secrets.append,
    )
    await views.load()
    return views


async def new_view(
    views: ViewRegistry, caller: Caller, *, app: str = "counter", state: ViewState = ViewState.LIVE
) -> ViewRecord:
    view = await views.create(app, principal=caller.principal, session_id=caller.session_id, bound=True, arguments={})
    view.state = state
    if caller.session_id is not None:
        views.active_sessions.add(caller.session_id)
    return view


def code_of(router: Router, caller: Caller, view_id: str | None = None) -> str:
    with pytest.raises(ViewError) as info:
        router.route("counter", caller, view_id)
    return info.value.code


async def test_a_view_id_reaches_only_views_of_its_app_and_principal(tmp_path: Path) -> None:
    views = await registry(tmp_path)
    alice = await new_view(views, legacy("s1", "alice"))
    router = Router(views, local_mode=False)
    assert router.route("counter", legacy("s9", "alice"), alice.handle) is alice
    assert code_of(router, legacy("s1", "bob"), alice.handle) == "VIEW_UNKNOWN"
    assert code_of(router, legacy("s1", "alice"), alice.handle[:-1]) == "VIEW_UNKNOWN"
    with pytest.raises(ViewError, match="VIEW_UNKNOWN"):
        router.route("notes", legacy("s1", "alice"), alice.handle)


async def test_a_session_reaches_the_view_most_recently_bound_to_it(tmp_path: Path) -> None:
    views = await registry(tmp_path)
    older = await new_view(views, legacy("s1"))
    newer = await new_view(views, legacy("s1"))
    newer.bound_at = older.bound_at + 1
    await new_view(views, legacy("s2"))
    router = Router(views, local_mode=True)
    assert router.route("counter", legacy("s1"), None) is newer


async def test_in_local_mode_unbound_and_ended_session_views_are_shared_but_live_sessions_are_not(
    tmp_path: Path,
) -> None:
    views = await registry(tmp_path)
    mine = await new_view(views, legacy("s1"))
    router = Router(views, local_mode=True)
    assert code_of(router, SESSIONLESS) == "VIEW_NOT_OPEN"
    assert code_of(router, legacy("s2")) == "VIEW_NOT_OPEN"
    views.active_sessions.discard("s1")  # the session ended
    assert router.route("counter", SESSIONLESS, None) is mine
    await new_view(views, SESSIONLESS)
    assert code_of(router, legacy("s3")) == "VIEW_AMBIGUOUS"


async def test_closed_views_are_no_candidates_but_their_session_still_reaches_them(tmp_path: Path) -> None:
    views = await registry(tmp_path)
    closed = await new_view(views, legacy("s1"), state=ViewState.CLOSED)
    router = Router(views, local_mode=True)
    assert router.route("counter", legacy("s1"), None) is closed
    views.active_sessions.discard("s1")
    assert code_of(router, SESSIONLESS) == "VIEW_NOT_OPEN"


async def test_without_auth_and_outside_local_mode_a_sessionless_caller_must_name_its_view(tmp_path: Path) -> None:
    views = await registry(tmp_path)
    view = await new_view(views, SESSIONLESS)
    router = Router(views, local_mode=False)
    assert code_of(router, SESSIONLESS) == "VIEW_NOT_OPEN"
    assert router.route("counter", SESSIONLESS, view.handle) is view


async def test_with_auth_a_principal_reaches_its_own_views_from_any_session(tmp_path: Path) -> None:
    views = await registry(tmp_path)
    alice = await new_view(views, legacy("s1", "alice"))
    router = Router(views, local_mode=False)
    assert router.route("counter", Caller("alice", None, "2026-07-28"), None) is alice
    assert code_of(router, legacy("s1", "bob")) == "VIEW_NOT_OPEN"  # alice's session id presented by bob
    bob = await new_view(views, legacy("s2", "bob"))
    assert router.route("counter", legacy("s1", "bob"), None) is bob


async def test_views_survive_a_reload_of_the_registry_and_tabs_count_as_disconnected(database: str) -> None:
    secrets: list[str] = []
    views = await registry(database, secrets)
    live = await new_view(views, legacy("s1"))
    live.data["count"] = 3
    await views.save(live)
    pending = await new_view(views, SESSIONLESS, state=ViewState.PENDING)
    await views.save(pending)
    assert secrets == [live.handle, live.attach_key, pending.handle, pending.attach_key]

    again = await registry(database)
    restored = again.by_attach_key(live.attach_key)
    assert restored is not None and restored.handle == live.handle
    assert (restored.state, restored.data, restored.session_id) == (ViewState.DISCONNECTED, {"count": 3}, "s1")
    assert again.active_sessions == set()  # sessions end with the process
    still = again.by_handle(pending.handle)
    assert still is not None and still.state is ViewState.PENDING
    await views.close()
    await again.close()


async def test_sweeps_expire_old_pending_and_closed_views_and_close_tabs_that_never_came_back(database: str) -> None:
    settings = BridgeSettings(pending_expiry=60, closed_expiry=120, reconnect_grace=5, wait_for_live=10)
    bridge = Bridge(settings, ViewStore(database))
    await bridge.registry.load()
    views = bridge.registry
    pending = await new_view(views, SESSIONLESS, state=ViewState.PENDING)
    closed = await new_view(views, SESSIONLESS, state=ViewState.CLOSED)
    lost = await new_view(views, SESSIONLESS, state=ViewState.DISCONNECTED)
    start = max(view.changed_at for view in views)
    await bridge.sweep(start + 9)
    assert (pending.state, closed.state, lost.state) == (ViewState.PENDING, ViewState.CLOSED, ViewState.DISCONNECTED)
    await bridge.sweep(start + 10)
    assert lost.state is ViewState.CLOSED
    await bridge.sweep(start + 60)
    assert views.by_handle(pending.handle) is None and pending.state is ViewState.EXPIRED
    await bridge.sweep(start + 120)
    assert views.by_handle(closed.handle) is None
    assert [row.handle for row in await stored_rows(database)] == [lost.handle]
    await views.close()


async def stored_rows(database: str) -> list[Any]:
    store = ViewStore(database)
    await store.open()
    try:
        return list(await store.load())
    finally:
        await store.close()


async def test_opening_reuses_the_callers_view_and_creates_a_new_one_when_it_is_closed(tmp_path: Path) -> None:
    bridge = Bridge(BridgeSettings(), ViewStore(tmp_path / "views.db"))
    await bridge.registry.load()
    bridge.apps["counter"] = collect_app(Counter)
    first = await bridge.open("counter", legacy("s1"), view_id=None, arguments={"title": "a"})
    again = await bridge.open("counter", legacy("s1"), view_id=None, arguments={"title": "b"})
    assert (first.reused, again.reused, again.view) == (False, True, first.view)
    assert first.view.input == {"title": "b"}  # a view without tab is built from the newest input
    first.view.set_state(ViewState.CLOSED, 0)
    third = await bridge.open("counter", legacy("s1"), view_id=first.view.handle, arguments={})
    assert third.reused is False and third.view is not first.view
    with pytest.raises(ViewError, match="VIEW_UNKNOWN"):
        await bridge.open("counter", legacy("s1"), view_id="nope", arguments={})


async def test_a_reused_view_whose_tab_goes_while_it_is_saved_is_not_handed_out_and_a_new_one_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ViewStore(tmp_path / "views.db")
    bridge = Bridge(BridgeSettings(), store)
    await bridge.registry.load()
    bridge.apps["counter"] = collect_app(Counter)
    first = (await bridge.open("counter", legacy("s1"), view_id=None, arguments={})).view
    saving = store.save

    async def tab_goes_meanwhile(row: ViewRow, *, writer: str | None = None) -> None:
        await saving(row, writer=writer)
        first.set_state(ViewState.CLOSED, time.time())  # its tab's delete event, run while the write was awaited

    monkeypatch.setattr(store, "save", tab_goes_meanwhile)
    again = await bridge.open("counter", legacy("s1"), view_id=None, arguments={"title": "b"})
    assert not again.reused and again.view is not first and again.view.is_open
    await bridge.registry.close()


async def test_with_reopen_new_opening_replaces_the_callers_previous_view(tmp_path: Path) -> None:
    bridge = Bridge(BridgeSettings(reopen="new"), ViewStore(tmp_path / "views.db"))
    await bridge.registry.load()
    bridge.apps["counter"] = collect_app(Counter)
    first = await bridge.open("counter", legacy("s1"), view_id=None, arguments={})
    second = await bridge.open("counter", legacy("s1"), view_id=None, arguments={})
    assert second.view is not first.view and first.view.state is ViewState.REPLACED
    with pytest.raises(ViewError) as info:
        await bridge.call("counter", legacy("s1"), first.view.handle, _never)
    assert info.value.code == "VIEW_REPLACED" and first.view.handle in info.value.message


async def _never(view: Any) -> None:
    raise AssertionError("a replaced view runs nothing")


class Title(BaseModel):
    title: str = "Counter"


class Row(BaseModel):
    sku: str
    qty: int


class Place(BaseModel):
    qty: int
    bin: str


@mcp_app(description="Shows a counter.", route="/counter", input=Title, select=True)
class Counter:
    @mcp_app_action(description="Lists rows.", returns=Presenter("Row", Row))
    def rows(self) -> list[dict[str, Any]]:
        return []

    @mcp_app_action(description="Places stock. Carefully.", returns=Presenter("Place", Place))
    def place(self) -> dict[str, Any]:
        return {}

    @mcp_app_action(description="Plain.")
    def plain(self) -> None:
        pass

    async def on_mcp_app_update(self, event: McpAppUpdateEvent) -> None:
        pass


def test_select_adds_the_union_of_all_action_presenter_keys_to_action_tools_only(tmp_path: Path) -> None:
    bridge = Bridge(BridgeSettings(), ViewStore(tmp_path / "views.db"))
    tools = {tool.name: tool for tool in app_tools(collect_app(Counter), bridge)}
    assert list(tools) == ["counter", "counter_update", "counter_rows", "counter_place", "counter_plain"]
    for name in ("counter_rows", "counter_place", "counter_plain"):
        select = tools[name].input_schema["properties"]["_select"]
        assert select["items"]["enum"] == ["bin", "qty", "sku"]
    for name in ("counter", "counter_update"):  # opening again and updates repeat harmlessly: no _call_id
        assert not {"_select", "_call_id"} & set(tools[name].input_schema["properties"])
    assert list(tools["counter_rows"].input_schema["properties"]) == ["_view", "_call_id", "_select"]
    assert tools["counter_rows"].input_schema["properties"]["_call_id"]["maxLength"] == 64
    assert tools["counter"].input_schema == tools["counter_update"].input_schema


async def test_a_registry_restores_only_the_views_of_its_apps(database: str) -> None:
    views = await registry(database)
    counter = await new_view(views, SESSIONLESS)
    notes = await new_view(views, SESSIONLESS, app="notes")
    only_notes = ViewRegistry(ViewStore(database))
    await only_notes.load(apps={"notes"})
    assert only_notes.by_handle(counter.handle) is None
    restored = only_notes.by_handle(notes.handle)
    assert restored is not None and restored.app == "notes"
    await views.close()
    await only_notes.close()


async def test_a_worker_keeps_only_the_newest_named_of_other_workers_views_and_forgets_the_others_secrets(
    tmp_path: Path,
) -> None:
    there = ViewRegistry(ViewStore(tmp_path / "views.db"))
    there.worker = "w2"
    await there.load()
    views = [await new_view(there, SESSIONLESS) for _ in range(5)]
    for view in views:
        await there.claim(view)  # each attached on w2
    forgotten: list[str] = []
    here = ViewRegistry(ViewStore(tmp_path / "views.db"), on_forget=forgotten.append, foreign_limit=3)
    here.worker = "w1"
    await here.load()
    for view in views:  # calls on w1 name them, one after another
        assert (await here.lookup(view.handle)) is not None
    assert len(here) == 3 and here.by_handle(views[0].handle) is None and here.by_handle(views[4].handle) is not None
    assert set(forgotten) == {secret for view in views[:2] for secret in (view.handle, view.attach_key)}
    assert (await here.lookup(views[0].handle)) is not None  # named again: read in again
    await here.close()
    await there.close()
