"""The server over real HTTP: the official MCP client in both protocol eras, NiceGUI pages, start-up checks."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Any, cast

import httpx
import mcp_types
import pytest
import websockets
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from playwright.async_api import Page

from tests.support.e2e import RunningServer, mcp_client, mcp_client_with_token, run_server
from webapp.core.settings import Settings
from webapp.server.composition import WebApp
from webapp.server.mcp_adapter import SDKChangedError, connection_of

MODES = ["auto", "legacy"]
SOCKET_ON_WEBSOCKET = "window.socket?.connected && window.socket.io.engine.transport.name === 'websocket'"
TEST_TOOLS = ["echo", "whoami", "boom", "progress", "wait_session_end", "calllog_tail", "hold"]


def _text(result: mcp_types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mcp_types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_shows_the_registered_tools(test_server: RunningServer, mode: Any) -> None:
    async with mcp_client(test_server, mode=mode) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == TEST_TOOLS
    echo = tools[0]
    assert echo.description == "Echoes the text."
    assert echo.input_schema["properties"] == {"text": {"type": "string"}}


@pytest.mark.parametrize("mode", MODES)
async def test_a_tool_call_returns_the_tools_result(test_server: RunningServer, mode: Any) -> None:
    async with mcp_client(test_server, mode=mode) as client:
        result = await client.call_tool("echo", {"text": "hi there"})
    assert not result.is_error
    assert _text(result) == "hi there"


@pytest.mark.parametrize("mode", MODES)
async def test_an_exception_in_a_handler_is_an_is_error_result_and_the_server_keeps_serving(
    test_server: RunningServer, mode: Any
) -> None:
    async with mcp_client(test_server, mode=mode) as client:
        failed = await client.call_tool("boom", {})
        after = await client.call_tool("echo", {"text": "still here"})
    assert failed.is_error
    assert _text(failed).startswith('<tool_error code="INTERNAL_ERROR" severity="error">\n')
    assert "<message>[boom] boom &lt;on purpose></message>" in _text(failed)
    assert _text(after) == "still here"


@pytest.mark.parametrize("mode", MODES)
async def test_progress_notifications_reach_the_client(test_server: RunningServer, mode: Any) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with mcp_client(test_server, mode=mode) as client:
        result = await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
    assert _text(result) == "3 steps"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_legacy_caller_has_its_session_id_and_protocol(test_server: RunningServer) -> None:
    # Guards webapp/mcp_adapter.py: the session id comes from SDK internals.
    async with mcp_client(test_server, mode="legacy") as client:
        caller = (await client.call_tool("whoami", {})).structured_content
    assert caller is not None
    assert re.fullmatch(r"[0-9a-f]{32}", caller["session_id"])
    assert caller["protocol"] == "2025-11-25"
    assert caller["principal"] is None
    assert caller["tool"] == "whoami"
    assert caller["base_url"] == test_server.base_url


async def test_a_sessionless_caller_has_no_session_id(test_server: RunningServer) -> None:
    async with mcp_client(test_server) as client:
        caller = (await client.call_tool("whoami", {})).structured_content
    assert caller is not None
    assert caller["session_id"] is None
    assert caller["protocol"] == "2026-07-28"


async def test_the_end_of_a_legacy_session_is_reported_to_session_end_hooks(test_server: RunningServer) -> None:
    # Guards webapp/mcp_adapter.py: the hook rides on the SDK's per-connection exit stack.
    async with mcp_client(test_server, mode="legacy") as client:
        caller = (await client.call_tool("whoami", {})).structured_content
    assert caller is not None
    async with mcp_client(test_server) as other:
        result = await other.call_tool("wait_session_end", {"session_id": caller["session_id"], "timeout": 10})
    assert not result.is_error, _text(result)


async def test_calls_are_recorded_with_the_session_id_masked(test_server: RunningServer) -> None:
    async with mcp_client(test_server, mode="legacy") as client:
        caller = (await client.call_tool("whoami", {})).structured_content
        tail = (await client.call_tool("calllog_tail", {"n": 1})).structured_content
    assert caller is not None and tail is not None
    session_id: str = caller["session_id"]
    [record] = tail["records"]
    assert record["tool"] == "whoami"
    assert record["protocol"] == "2025-11-25"
    assert record["session_id"] == session_id[:6] + "…"
    assert record["structured_content"]["session_id"] == session_id[:6] + "…"
    assert session_id not in str(record)
    assert record["duration_ms"] >= 0


async def test_a_nicegui_page_is_served_by_the_same_process(test_server: RunningServer) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(test_server.base_url + "/")
    assert response.status_code == 200
    assert "webapp test home" in response.text


def test_port_zero_prints_the_real_port_and_the_urls(test_server: RunningServer) -> None:
    assert test_server.port > 0
    assert f"MCP  {test_server.base_url}/mcp" in test_server.output
    assert f"page {test_server.base_url}/hello" in test_server.output


async def test_the_access_log_shows_no_query_string(test_server: RunningServer) -> None:
    secret = "Kx7s0-attach-key-that-must-not-be-logged"
    async with httpx.AsyncClient() as http:
        response = await http.get(test_server.base_url + "/hello", params={"key": secret})
    assert response.status_code == 200
    line = test_server.wait_for_output(r'"GET /hello\S* HTTP/1.1" 200').group(0)
    assert line == '"GET /hello HTTP/1.1" 200'
    assert "Kx7s0" not in test_server.output


async def test_mcp_refuses_a_foreign_host_or_origin(test_server: RunningServer) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient() as http:
        foreign_host = await http.post(test_server.mcp_url, json=body, headers={**headers, "host": "evil.example"})
        foreign_origin = await http.post(
            test_server.mcp_url, json=body, headers={**headers, "origin": "http://localhost:9"}
        )
    assert foreign_host.status_code == 421
    assert foreign_origin.status_code == 403


async def test_pages_refuse_a_foreign_host_too(test_server: RunningServer) -> None:
    async with httpx.AsyncClient() as http:
        refused = await http.get(test_server.base_url + "/", headers={"host": "evil.example"})
        served = await http.get(test_server.base_url + "/")
    assert refused.status_code == 421
    assert served.headers["referrer-policy"] == "no-referrer"


async def test_with_tokens_mcp_needs_a_bearer_token_which_names_the_principal(tmp_path: Path) -> None:
    token = "tok-0123456789abcdefghijklmnop"
    with run_server("--token", f"ann={token}", db=tmp_path / "t.db") as server:
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(server.mcp_url, json={}, headers={"accept": "application/json"})
        async with mcp_client_with_token(server, token, mode="legacy") as client:
            caller = (await client.call_tool("whoami", {})).structured_content
            await client.call_tool("echo", {"text": f"my token is {token}"})
            tail = (await client.call_tool("calllog_tail", {"n": 1})).structured_content
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert caller is not None and caller["principal"] == "ann"
    assert tail is not None and tail["records"][0]["arguments"] == {"text": "my token is tok-01…"}
    assert token not in server.output


def test_a_non_loopback_host_needs_allow_remote(tmp_path: Path) -> None:
    with run_server("--host", "0.0.0.0", wait=False, db=tmp_path / "t.db") as refused:
        assert refused.process.wait(30) == 2
    assert "--allow-remote" in refused.output
    assert "0.0.0.0" in refused.output


def test_allow_remote_listens_on_all_addresses_with_a_warning(tmp_path: Path) -> None:
    with run_server("--host", "0.0.0.0", "--allow-remote", db=tmp_path / "t.db") as running:
        assert running.base_url.startswith("http://127.0.0.1:")
        assert "reachable from the network" in running.output


async def test_a_page_renders_in_chromium(test_server: RunningServer, page: Page) -> None:
    await page.goto(test_server.base_url + "/hello?key=abc")
    await page.get_by_text("hello, 3 characters of key").wait_for(timeout=10_000)


async def test_at_the_default_level_a_page_load_logs_its_page_but_no_assets_or_socket(
    tmp_path: Path, page: Page
) -> None:
    with run_server(db=tmp_path / "t.db") as server:
        await page.goto(server.base_url + "/hello?key=abc")
        await page.wait_for_function(SOCKET_ON_WEBSOCKET, timeout=10_000)
        server.wait_for_output(r'"GET /hello HTTP/1\.1" 200')
    assert "/_nicegui/" not in server.output
    assert "WebSocket" not in server.output
    assert "key=abc" not in server.output


async def test_the_websocket_log_line_shows_no_query_string(tmp_path: Path, page: Page) -> None:
    with run_server("--log-level", "debug", db=tmp_path / "t.db") as server:
        await page.goto(server.base_url + "/hello?key=abc")
        await page.wait_for_function(SOCKET_ON_WEBSOCKET, timeout=10_000)
        client_id = await page.evaluate("window.clientId")
        path = server.wait_for_output(r'"WebSocket (\S*socket\.io\S*)" \[accepted\]').group(1)
    assert isinstance(client_id, str) and len(client_id) >= 32
    assert path.endswith("/socket.io/") and "?" not in path
    assert "client_id=" not in server.output and client_id not in server.output


async def test_the_pages_socket_declines_per_message_compression_which_would_cost_each_tab_a_zlib_window(
    test_server: RunningServer,
) -> None:
    url = test_server.base_url.replace("http://", "ws://") + "/_nicegui_ws/socket.io/?EIO=4&transport=websocket"
    async with websockets.connect(url, compression="deflate") as socket:  # as a browser asks for it
        assert str(await socket.recv(decode=True)).startswith("0{")  # engine.io's open packet: the socket is up
        assert socket.response is not None
        assert "Sec-WebSocket-Extensions" not in socket.response.headers


def test_the_sdk_internals_the_adapter_reads_are_still_there() -> None:
    # Fails loudly when an mcp release moves them: see webapp/mcp_adapter.py.
    connection = Connection(cast(Any, None), protocol_version="2025-11-25", session_id="abc123")
    session = ServerSession(cast(Any, None), connection)
    assert connection_of(session) is connection
    assert connection_of(session).session_id == "abc123"
    assert isinstance(connection.state, dict)
    assert isinstance(connection.exit_stack, contextlib.AsyncExitStack)
    with pytest.raises(SDKChangedError, match="_connection"):
        connection_of(cast(Any, object()))


def test_open_in_browser_does_nothing_without_the_setting() -> None:
    assert WebApp(Settings()).open_in_browser("http://127.0.0.1:1/inventory?key=x") is False
