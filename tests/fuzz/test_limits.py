"""Limits on what one caller can send or hold: integer range, string, array and nesting sizes, `_view` length, views
per caller and the size of a call-log record. Each breach answers a clear error and the server keeps serving.

One in-process server (counter app, local mode) over the official MCP client and httpx2's ASGI transport.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
import pytest_asyncio
from mcp import Client

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_server import InProcess, in_process_server
from webapp.bridge.dispatch import Bridge, BridgeSettings
from webapp.bridge.errors import ViewError
from webapp.bridge.store import ViewStore
from webapp.calllog.memory import CLIP_STRING
from webapp.calllog.store import CallLogStore
from webapp.core.context import Caller
from webapp.core.database import dump_json, load_json

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIMIT = 3


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[InProcess]:
    folder = tmp_path_factory.mktemp("limits")
    options: dict[str, Any] = {"reconnect_grace": 0.05, "wait_for_live": 0.05, "browser_confirm": False}
    async with in_process_server(folder, counter_app, max_views_per_caller=LIMIT, **options) as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def calls(server: InProcess, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[CallLogStore]:
    store = CallLogStore(tmp_path_factory.mktemp("calls") / "calls.db")
    await store.open()
    detach = await store.attach(server.webapp.calllog)
    yield store
    detach()
    await store.close()


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


async def still_serving(client: Client) -> None:
    result = await client.call_tool("ping", {})
    assert not result.is_error and text_of(result) == "pong"


async def test_integers_beyond_64_bits_are_validation_errors_and_the_call_is_still_logged(
    server: InProcess, calls: CallLogStore
) -> None:
    before = await calls.last_seq()
    async with server.mcp() as client:
        opening = await client.call_tool("counter", {"start": 2**70})
        nested = await client.call_tool("notes_append", {"line": "x", "extra": {"deep": [-(2**64)]}})
        await still_serving(client)
    assert opening.is_error and text_of(opening).startswith("<validation_error")
    assert '<field name="start">Integer is outside the 64-bit range. You sent: a 71-bit integer.' in text_of(opening)
    assert nested.is_error and '<field name="extra.deep.0">Integer is outside the 64-bit range' in text_of(nested)
    logged = [record.tool for record in await calls.load(10) if record.seq > before]
    assert logged == ["counter", "notes_append", "ping"]


async def test_view_rows_store_integers_orjson_refuses() -> None:
    text = dump_json({"n": 2**70, "m": -(2**64)})
    assert json.loads(text) == {"n": 2**70, "m": -(2**64)}
    assert load_json(text) is not None


async def test_a_view_id_over_64_characters_is_a_validation_error_that_repeats_only_a_prefix(
    server: InProcess, calls: CallLogStore
) -> None:
    long, huge = "v" * 65, "v" * 200_000
    async with server.mcp() as client:
        action = await client.call_tool("counter_increment", {"_view": long})
        opening = await client.call_tool("counter", {"_view": long})
        beyond = await client.call_tool("counter", {"_view": huge})
        wrong_type = await client.call_tool("counter_reset", {"_view": ["a", "b"]})
        await still_serving(client)
    for result in (action, opening, beyond):
        assert result.is_error and text_of(result).startswith("<validation_error") and len(text_of(result)) < 500
    for result in (action, opening):
        assert '<field name="_view">String should have at most 64 characters.' in text_of(result)
    assert '<field name="_view">String has 200000 characters; the limit is 65536.' in text_of(beyond)
    assert '<field name="_view">Input should be a valid string. You sent: array(2). Expected type: string.' in text_of(
        wrong_type
    )
    logged = [record for record in await calls.load(5) if record.tool == "counter"][-1]
    assert len(logged.arguments["_view"]) < CLIP_STRING + 40


async def test_an_unknown_view_id_is_repeated_at_most_64_characters_long() -> None:
    error = ViewError("VIEW_UNKNOWN", "counter", view="k" * 5000)
    assert "k" * 64 + "…" in error.message and "k" * 65 not in error.message


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"line": "é" * 70_000}, '<field name="line">String has 70000 characters; the limit is 65536.'),
        ({"line": "x", "bulk": list(range(10_001))}, '<field name="bulk">Value has 10001 items; the limit is 10000.'),
        ({"line": "x", "bulk": {f"k{n}": n for n in range(10_001)}}, '<field name="bulk">Value has 10001 items'),
        ({"line": "x", "deep": json.loads("[" * 40 + "]" * 40)}, "is nested deeper than 32 levels."),
    ],
    ids=["string", "array", "object", "nesting"],
)
async def test_strings_arrays_and_nesting_beyond_the_limits_are_validation_errors(
    server: InProcess, arguments: dict[str, Any], expected: str
) -> None:
    async with server.mcp() as client:
        result = await client.call_tool("notes_append", arguments)
        await still_serving(client)
    assert result.is_error and text_of(result).startswith("<validation_error")
    assert expected in text_of(result)


async def test_a_huge_result_is_logged_clipped(server: InProcess, calls: CallLogStore) -> None:
    async with server.mcp() as client:
        result = await client.call_tool("no_such_tool", {"text": "é" * 60_000})
    assert result.is_error
    record = server.webapp.calllog.records()[-1]
    assert record.tool == "no_such_tool" and record.arguments["text"].endswith("… (60000 characters)")
    assert (await calls.load(1))[0].arguments == record.arguments


async def test_opening_more_views_than_the_per_caller_limit_answers_too_many_views(server: InProcess) -> None:
    tabs = [await server.open_tab("/counter"), await server.open_tab("/counter")]  # two views a person opened
    for tab in tabs:
        await server.attached(tab)
    async with server.mcp(mode="auto") as sessionless:  # shares the unbound views, so each opening makes a new one
        opened = [await sessionless.call_tool("counter", {}) for _ in range(LIMIT + 2)]
        await still_serving(sessionless)
    assert [result.is_error for result in opened] == [False] * LIMIT + [True, True]
    assert text_of(opened[-1]) == (
        '<tool_error code="TOO_MANY_VIEWS" severity="error">\n'
        f"<message>No new 'counter' view was opened: {LIMIT} views are already open for this caller, "
        "which is the limit.</message>\n"
        "<recovery>Pass _view to reuse one of your open views, or ask the user to close view tabs, then retry."
        "</recovery>\n</tool_error>"
    )
    async with server.mcp() as session:  # another caller still gets its own view
        assert not (await session.call_tool("notes", {})).is_error
    for tab in tabs:
        await tab.closed()


async def test_a_principal_at_the_limit_gets_too_many_views_and_its_other_views_stay(tmp_path: Path) -> None:
    bridge = Bridge(BridgeSettings(local_mode=False, max_views=2), ViewStore(tmp_path / "views.db"))
    await bridge.registry.load()
    alice = Caller(principal="alice", session_id=None, protocol="2026-07-28")
    for app in ("counter", "notes"):
        await bridge.registry.create(app, principal="alice", session_id=None, bound=True, arguments={})
    await bridge.registry.create("counter", principal="bob", session_id=None, bound=True, arguments={})
    with pytest.raises(ViewError) as caught:
        await bridge.open("clock", alice, view_id=None, arguments={})
    assert caught.value.code == "TOO_MANY_VIEWS" and len(bridge.registry) == 3
    bob = Caller(principal="bob", session_id=None, protocol="2026-07-28")
    assert not (await bridge.open("clock", bob, view_id=None, arguments={})).reused
