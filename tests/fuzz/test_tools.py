"""Hypothesis-generated arguments, valid and invalid, for every tool of two servers — the counter test apps and the
product's inventory app — called in process by several callers; after each call the answer is a tool result in the
wire format (never INTERNAL_ERROR), the call is logged, and the view registry's invariants hold.

Every app has a live view (a simulated tab) owned by one MCP session, so valid arguments reach the handlers.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import given
from hypothesis import strategies as st

from tests.support.fuzz_app import counter_app, inventory_app
from tests.support.fuzz_invariants import FuzzTally, RegistryChecker, outcome_of, result_problems
from tests.support.fuzz_server import InProcess, Tab, in_process_server
from tests.support.fuzz_strategies import fuzz_settings, invalid_arguments, valid_arguments, view_ids
from webapp.bridge.dispatch import Bridge
from webapp.core.context import Caller
from webapp.server.composition import WebApp

OWNER = Caller(principal=None, session_id="fuzz-owner-session", protocol="2025-11-25")
CALLERS = [
    OWNER,
    Caller(principal=None, session_id="fuzz-other-session", protocol="2025-11-25"),
    Caller(principal=None, session_id=None, protocol="2026-07-28"),
]
FAST: dict[str, Any] = {
    "wait_for_live": 0.02,
    "reconnect_grace": 0.05,
    "call_timeout": 2.0,
    "browser_confirm": False,
}
NOT_FUZZED = {"counter_hang", "counter_trace"}  # one waits until cancelled, the other needs a browser's answer
CRASH_ON_PURPOSE = {"counter_explode"}
EXAMPLES = {"counter": 70, "inventory": 60}
WAREHOUSES = st.sampled_from(["BER", "HAM", "MUC", "ber"])
HINTS = {  # known keys of the demo data, so valid arguments also reach the domain's happy paths
    "sku": st.sampled_from(["FST-1001", "FST-1002", "fst-1003", "TLS-2001", "TLS-2003"]),
    "warehouse_code": WAREHOUSES,
    "code": WAREHOUSES,
    "from_warehouse": WAREHOUSES,
    "to_warehouse": WAREHOUSES,
    "delta": st.integers(min_value=-3, max_value=50).filter(bool),
    "quantity": st.integers(min_value=1, max_value=5),
    "reason": st.sampled_from(["Delivery", "Stock count correction"]),
}


@dataclass
class Fuzzed:
    server: InProcess
    checker: RegistryChecker
    apps: list[str]
    handles: list[str]
    tabs: list[Tab]


async def fuzzed_server(
    folder: Any, build: Callable[[WebApp], Bridge], openings: dict[str, dict[str, Any]]
) -> AsyncIterator[Fuzzed]:
    async with in_process_server(folder, build, **FAST) as server:
        handles: list[str] = []
        tabs: list[Tab] = []
        for tool, arguments in openings.items():
            opened = await server.webapp.call_tool(tool, arguments, OWNER)
            assert opened.structured_content is not None, opened.content
            tab = await server.open_tab(str(opened.structured_content["url"]))
            await server.attached(tab)
            handles.append(str(opened.structured_content["view"]))
            tabs.append(tab)
        checker = RegistryChecker(server.bridge, server.webapp.settings.db)
        try:
            yield Fuzzed(server, checker, list(openings), handles, tabs)
        finally:
            checker.close()
            for tab in tabs:
                await tab.closed()


@pytest_asyncio.fixture(loop_scope="module")
async def counter(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fuzzed]:
    folder = tmp_path_factory.mktemp("fuzz-counter")
    async for fuzzed in fuzzed_server(folder, counter_app, {"counter": {"title": "fuzz"}, "notes": {"text": "a"}}):
        yield fuzzed


@pytest_asyncio.fixture(loop_scope="module")
async def inventory(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Fuzzed]:
    folder = tmp_path_factory.mktemp("fuzz-inventory")
    async for fuzzed in fuzzed_server(folder, inventory_app, {"inventory": {}}):
        yield fuzzed


def reclaim(fuzzed: Fuzzed) -> None:
    """Bind the live views to the owner's session again (another caller that reopened one by its id took it)."""
    for app, handle in zip(fuzzed.apps, fuzzed.handles, strict=True):
        reopened = fuzzed.server.run(fuzzed.server.webapp.call_tool(app, {"_view": handle}, OWNER))
        assert not reopened.is_error, reopened.content


def fuzz_tool(fuzzed: Fuzzed, name: str, schema: dict[str, Any], tally: FuzzTally, examples: int) -> None:
    server = fuzzed.server
    reclaim(fuzzed)
    plumbing = server.webapp.is_plumbing(name)  # a view's own tool (its tunnel): never in the call log
    arguments = st.one_of(valid_arguments(schema, view_ids(fuzzed.handles), HINTS), invalid_arguments(schema))

    @fuzz_settings(examples)
    @given(arguments=arguments, caller=st.sampled_from(CALLERS))
    def case(arguments: dict[str, Any], caller: Caller) -> None:
        result = server.run(server.webapp.call_tool(name, copy.deepcopy(arguments), caller))
        crash = result_problems(result, crash_allowed=name in CRASH_ON_PURPOSE)
        logged = server.webapp.calllog.records()[-1]
        if plumbing and logged.tool == name:
            crash.append(f"the call log recorded the app-only {name!r}")
        elif not plumbing and logged.tool != name:
            crash.append(f"the call log's last record is {logged.tool!r}")
        tally.add(f"{name} {outcome_of(result)}", crash=crash, invariants=fuzzed.checker.problems())

    case()


def fuzz_every_tool(fuzzed: Fuzzed, tally: FuzzTally, examples: int) -> None:
    server = fuzzed.server
    tools = [tool for tool in server.webapp.registry.tools() if tool.name not in NOT_FUZZED]
    for tool in tools:
        fuzz_tool(fuzzed, tool.name, tool.input_schema, tally, examples)
    still = server.run(server.webapp.call_tool(tools[0].name, {}, OWNER))
    tally.add("after the run", crash=result_problems(still), invariants=fuzzed.checker.problems())


def test_generated_arguments_for_every_counter_and_notes_tool_get_wire_format_answers(counter: Fuzzed) -> None:
    tally = FuzzTally("counter and notes tools")
    fuzz_every_tool(counter, tally, EXAMPLES["counter"])
    print(tally.report())
    assert tally.clean, tally.broken
    reached = {outcome.removesuffix(" ok") for outcome in tally.outcomes if outcome.endswith(" ok")}
    assert tally.cases >= 8 * EXAMPLES["counter"]
    assert {"counter_increment", "counter_update", "notes_append", "counter_count_to"} <= reached, reached


def test_generated_arguments_for_every_inventory_tool_get_wire_format_answers(inventory: Fuzzed) -> None:
    tally = FuzzTally("inventory tools")
    fuzz_every_tool(inventory, tally, EXAMPLES["inventory"])
    print(tally.report())
    assert tally.clean, tally.broken
    assert tally.cases >= 9 * EXAMPLES["inventory"]
    reached = {outcome.removesuffix(" ok") for outcome in tally.outcomes if outcome.endswith(" ok")}
    assert len({name for name in reached if name.startswith("inventory_")}) >= 5, reached


def test_the_registry_checker_sees_a_broken_index(counter: Fuzzed) -> None:
    view = next(iter(counter.server.bridge.registry))
    handle = view.handle
    view.handle = handle[:-1] + ("A" if handle[-1] != "A" else "B")
    try:
        assert any("not found by its own handle" in problem for problem in counter.checker.problems())
    finally:
        view.handle = handle
    assert counter.checker.problems() == []
    assert counter.server.run(asyncio.sleep(0, "idle")) == "idle"
