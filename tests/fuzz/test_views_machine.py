"""A hypothesis state machine opens, attaches, closes and reloads views for several callers — principals with their
sessions (auth on), and sessions without auth (local mode) — and calls their tools with their own, foreign, guessed
or no view ids. No call ever changes a view its caller may not reach, opening never hands out a foreign view, and
the view registry's invariants hold after every step.

Reach rules (apps.md §6): with auth, a principal reaches only its own views. In local mode, a call naming a view
reaches only that view; without a name it reaches views bound to its own session, or views bound to nobody (or
to an ended session).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
import pytest
import pytest_asyncio
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_invariants import FuzzTally, RegistryChecker, outcome_of, result_problems
from tests.support.fuzz_server import InProcess, Tab, in_process_server
from tests.support.fuzz_strategies import fuzz_settings
from webapp.bridge.registry import ViewRecord
from webapp.core.context import Caller

AUTH_CALLERS = [
    Caller("alice", "alice-session-1", "2025-11-25"),
    Caller("alice", "alice-session-2", "2025-11-25"),
    Caller("alice", None, "2026-07-28"),
    Caller("bob", "bob-session-1", "2025-11-25"),
    Caller("bob", None, "2026-07-28"),
    Caller("bob", "alice-session-1", "2025-11-25"),  # alice's session id presented with bob's token
]
LOCAL_CALLERS = [
    Caller(None, "local-session-1", "2025-11-25"),
    Caller(None, "local-session-2", "2025-11-25"),
    Caller(None, "local-session-3", "2025-11-25"),
    Caller(None, None, "2026-07-28"),
]
ACTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "counter_increment": ("counter", {"by": 1}),
    "counter_double": ("counter", {}),
    "counter_reset": ("counter", {}),
    "counter_update": ("counter", {"title": "updated"}),
    "notes_append": ("notes", {"line": "appended"}),
}
EXAMPLES, STEPS = 40, 30
HOW = st.sampled_from(["none", "none", "own", "foreign", "guess"])


@dataclass
class Before:
    """A view as it was before a call."""

    data: bytes
    principal: str | None
    session_id: str | None


@pytest_asyncio.fixture(loop_scope="module", params=["auth", "local"])
async def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[InProcess]:
    options: dict[str, Any] = {
        "wait_for_live": 0.02,
        "reconnect_grace": 0.02,
        "call_timeout": 2.0,
        "browser_confirm": False,
    }
    if request.param == "auth":
        options["token"] = ["alice=alice-token-5d1e0b3c", "bob=bob-token-9a7f2c6e"]
    async with in_process_server(tmp_path_factory.mktemp(f"machine-{request.param}"), counter_app, **options) as s:
        yield s


class ViewsMachine(RuleBasedStateMachine):
    server: ClassVar[InProcess]
    checker: ClassVar[RegistryChecker]
    tally: ClassVar[FuzzTally]
    callers: ClassVar[list[Caller]]
    auth: ClassVar[bool]

    def __init__(self) -> None:
        super().__init__()
        self.urls: dict[str, str] = {}  # handle -> attach URL, of the views opened in this run
        self.tabs: dict[str, Tab] = {}  # handle -> its current tab
        self.person_tabs: list[Tab] = []

    # -- helpers ----------------------------------------------------------------------------------------------------
    def views(self) -> list[ViewRecord]:
        return list(self.server.bridge.registry)

    def owns(self, caller: Caller, view: ViewRecord) -> bool:
        if self.auth:
            return view.principal == caller.principal
        return caller.session_id is not None and view.session_id == caller.session_id

    def pick(self, caller: Caller, how: str, index: int) -> str | None:
        """A `_view` value: none, one of the caller's views, someone else's, or a guess."""
        if how == "none":
            return None
        if how == "guess":
            handles = [view.handle for view in self.views()] or ["x" * 22]
            handle = handles[index % len(handles)]
            return [handle[:-1] + "A", handle.swapcase(), "Z" * 22, handle[:6]][index % 4]
        pool = [view.handle for view in self.views() if self.owns(caller, view) == (how == "own")]
        return pool[index % len(pool)] if pool else None

    def reachable(self, caller: Caller, sent: str | None, before: dict[str, Before], active: set[str]) -> set[str]:
        """The views this call may change, by the reach rules, from the state before it."""
        if sent is not None:
            named = before.get(sent)
            if named is None or (self.auth and named.principal != caller.principal):
                return set()
            return {sent}
        if self.auth:
            return {handle for handle, view in before.items() if view.principal == caller.principal}
        return {
            handle
            for handle, view in before.items()
            if (caller.session_id is not None and view.session_id == caller.session_id)
            or (view.principal is None and (view.session_id is None or view.session_id not in active))
        }

    def call(self, tool: str, arguments: dict[str, Any], caller: Caller) -> Any:
        registry = self.server.bridge.registry
        before = {
            view.handle: Before(orjson.dumps(view.data), view.principal, view.session_id) for view in self.views()
        }
        active = set(registry.active_sessions) - ({caller.session_id} if caller.session_id else set())
        result = self.server.run(self.server.webapp.call_tool(tool, dict(arguments), caller))
        sent = arguments.get("_view")
        allowed = self.reachable(caller, sent, before, active)
        after = {view.handle: orjson.dumps(view.data) for view in self.views()}
        changed = {handle for handle, data in after.items() if handle in before and data != before[handle].data}
        problems = result_problems(result)
        problems += [f"{tool} by {caller} changed a view it may not reach" for _ in changed - allowed]
        if sent is not None and sent not in allowed and outcome_of(result) not in ("VIEW_UNKNOWN", "VIEW_CLOSED"):
            problems.append(f"{tool} by {caller} with a foreign or unknown _view answered {outcome_of(result)}")
        structured = result.structured_content or {}
        handle = structured.get("view")
        if isinstance(handle, str):
            opened = registry_view(registry, handle)
            if self.auth and opened.principal != caller.principal:
                problems.append(f"{tool} by {caller} handed out a view of {opened.principal!r}")
            self.urls[handle] = str(structured["url"])
        self.tally.add(f"{tool} {outcome_of(result)}", crash=problems)
        return result

    # -- rules ------------------------------------------------------------------------------------------------------
    @rule(
        caller=st.integers(0, 99),
        app=st.sampled_from(["counter", "notes"]),
        how=HOW,
        index=st.integers(0, 99),
        attach=st.booleans(),
    )
    def open_view(self, caller: int, app: str, how: str, index: int, attach: bool) -> None:
        who = self.callers[caller % len(self.callers)]
        sent = self.pick(who, how, index)
        result = self.call(app, {} if sent is None else {"_view": sent}, who)
        handle = (result.structured_content or {}).get("view")
        if attach and isinstance(handle, str) and handle not in self.tabs:
            self.attach(handle)

    def attach(self, handle: str) -> None:
        tab = self.server.run(self.server.open_tab(self.urls[handle]))
        view = self.server.run(self.server.attached(tab))
        self.tabs[handle] = tab
        self.tally.add("attach", crash=[] if view.handle == handle else ["a tab attached to another view"])

    @rule(caller=st.integers(0, 99), action=st.sampled_from(sorted(ACTIONS)), how=HOW, index=st.integers(0, 99))
    def act(self, caller: int, action: str, how: str, index: int) -> None:
        who = self.callers[caller % len(self.callers)]
        sent = self.pick(who, how, index)
        arguments = dict(ACTIONS[action][1]) | ({} if sent is None else {"_view": sent})
        self.call(action, arguments, who)

    @rule(index=st.integers(0, 99))
    def attach_a_tab(self, index: int) -> None:
        waiting = [h for h in self.urls if h not in self.tabs and (v := self.find(h)) is not None and v.is_open]
        if waiting:
            self.attach(waiting[index % len(waiting)])

    @rule(index=st.integers(0, 99))
    def close_a_tab(self, index: int) -> None:
        if self.tabs:
            handle = sorted(self.tabs)[index % len(self.tabs)]
            self.server.run(self.tabs.pop(handle).closed())
            self.tally.add("close")

    @rule(index=st.integers(0, 99))
    def reload_a_tab(self, index: int) -> None:
        if self.tabs:
            handle = sorted(self.tabs)[index % len(self.tabs)]
            old = self.tabs[handle]
            new = self.server.run(self.server.open_tab(self.urls[handle]))
            view = self.server.run(self.server.attached(new))
            self.server.run(old.closed())
            self.tabs[handle] = new
            problems = [] if view.handle == handle and view.client is new.client else ["a reload attached elsewhere"]
            self.tally.add("reload", crash=problems)

    @rule(app=st.sampled_from(["counter", "notes"]))
    def a_person_opens_the_page(self, app: str) -> None:
        if len(self.person_tabs) < 2:
            tab = self.server.run(self.server.open_tab(f"/{app}"))
            self.server.run(self.server.attached(tab))
            self.person_tabs.append(tab)
            self.tally.add("person opens")

    @rule(caller=st.integers(0, 99))
    def a_session_ends(self, caller: int) -> None:
        who = self.callers[caller % len(self.callers)]
        if who.session_id is not None:
            self.server.bridge.session_ended(who.session_id)
            self.tally.add("session ends")

    @rule(roll=st.integers(0, 4))
    def views_expire(self, roll: int) -> None:
        if roll:
            return  # expiring at every step would leave no pending view to attach
        self.server.run(self.server.expire_closed_views())
        self.urls = {handle: url for handle, url in self.urls.items() if self.find(handle) is not None}
        self.tally.add("expire")

    @invariant()
    def the_registry_is_sound(self) -> None:
        problems = self.checker.problems()
        if problems:
            self.tally.add("invariant", invariants=problems)

    def find(self, handle: str) -> ViewRecord | None:
        return self.server.bridge.registry.by_handle(handle)

    def teardown(self) -> None:
        for tab in [*self.tabs.values(), *self.person_tabs]:
            self.server.run(tab.closed())
        self.server.run(self.server.expire_closed_views())


def registry_view(registry: Any, handle: str) -> ViewRecord:
    view = registry.by_handle(handle)
    assert view is not None, "a view the call named vanished"
    return view


def test_no_call_ever_reaches_a_foreign_view_while_views_open_close_and_reload(server: InProcess) -> None:
    auth = bool(server.webapp.settings.tokens)
    tally = FuzzTally(f"view state machine ({'principals' if auth else 'local sessions'})")
    checker = RegistryChecker(server.bridge, server.webapp.settings.db)
    machine = type(
        "Machine",
        (ViewsMachine,),
        {
            "server": server,
            "checker": checker,
            "tally": tally,
            "callers": AUTH_CALLERS if auth else LOCAL_CALLERS,
            "auth": auth,
        },
    )
    settings = fuzz_settings(EXAMPLES)
    settings = type(settings)(settings, stateful_step_count=STEPS)
    try:
        run_state_machine_as_test(machine, settings=settings)
    finally:
        checker.close()
    print(tally.report())
    assert tally.clean, tally.broken
    calls = sum(
        count for outcome, count in tally.outcomes.items() if " " in outcome and not outcome.startswith("person")
    )
    assert tally.outcomes["attach"] and tally.outcomes["reload"] and tally.outcomes["close"]
    assert calls >= EXAMPLES * 5
