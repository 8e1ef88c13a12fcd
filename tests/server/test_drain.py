"""A stopping server (SIGTERM or SIGINT, one process): it takes no new calls, ends the calls in flight with their
result or SERVER_STOPPING within its grace time, records them in the call log, and exits without a traceback."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import mcp_types
import pytest

from tests.support.apps import add_tools
from tests.support.e2e import mcp_client, run_server
from webapp.core.context import Caller
from webapp.core.settings import Settings
from webapp.server.composition import WebApp

HOLDING = "holding a call until the server stops"
MODES = [("legacy", signal.SIGTERM), ("auto", signal.SIGINT)]


def _stored_calls(db: Path) -> list[tuple[str, int, str]]:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT tool, is_error, blocks FROM webapp_calls ORDER BY seq").fetchall()


async def _stop_during_a_call(
    db: Path, mode: Literal["auto", "legacy"], number: signal.Signals, *args: str, **arguments: Any
) -> tuple[mcp_types.CallToolResult, str]:
    """Call `hold` on a server, send it `number` while the call runs; the call's result and the server's output."""
    with run_server(*args, db=db) as server:
        async with mcp_client(server, mode=mode) as client:
            await client.list_tools()  # as agents do first: the client checks results against the listed schemas
            call = asyncio.ensure_future(client.call_tool("hold", arguments))
            await asyncio.to_thread(server.wait_for_output, HOLDING)
            server.process.send_signal(number)
            result = await asyncio.wait_for(call, 20)
        assert await asyncio.to_thread(server.process.wait, 20) in (0, -number, 128 + number)
    return result, server.output


@pytest.mark.parametrize(("mode", "number"), MODES)
async def test_a_call_in_flight_ends_with_its_result_and_is_recorded(
    tmp_path: Path, mode: Literal["auto", "legacy"], number: signal.Signals
) -> None:
    db = tmp_path / "drain.db"
    result, output = await _stop_during_a_call(db, mode, number)
    assert not result.is_error and [block.text for block in result.content if block.type == "text"] == [
        "released by the stop"
    ]
    assert ("hold", 0, '["released by the stop"]') in _stored_calls(db)
    assert "Traceback" not in output and "is not open" not in output


@pytest.mark.parametrize(("mode", "number"), MODES)
async def test_a_call_that_outlasts_the_grace_time_ends_with_a_clear_error_that_is_recorded(
    tmp_path: Path, mode: Literal["auto", "legacy"], number: signal.Signals
) -> None:
    db = tmp_path / "drain.db"
    result, output = await _stop_during_a_call(db, mode, number, "--drain-timeout", "0.5", past_stop=True)
    assert result.is_error
    (text,) = [block.text for block in result.content if block.type == "text"]
    assert text.startswith('<tool_error code="SERVER_STOPPING"') and "the action may not have run" in text
    assert "Retry in a few seconds with the same _call_id." in text
    ((tool, is_error, blocks),) = [row for row in _stored_calls(db) if row[0] == "hold"]
    assert (tool, is_error) == ("hold", 1) and "SERVER_STOPPING" in blocks
    assert "Traceback" not in output and "is not open" not in output


async def test_a_stopping_server_takes_no_new_call_and_records_the_refusal() -> None:
    webapp = WebApp(Settings())
    add_tools(webapp)
    caller = Caller(principal=None, session_id=None, protocol="2026-07-28")
    assert not (await webapp.call_tool("echo", {"text": "before"}, caller)).is_error
    webapp.drain.begin()
    refused = await webapp.call_tool("echo", {"text": "after"}, caller)
    (text,) = [block.text for block in refused.content if block.type == "text"]
    assert refused.is_error and text.startswith('<tool_error code="SERVER_STOPPING"') and "'echo' did not run" in text
    assert [(r.tool, r.is_error) for r in webapp.calllog.records()] == [("echo", False), ("echo", True)]
    await webapp.drain.finish()  # nothing in flight: returns at once
