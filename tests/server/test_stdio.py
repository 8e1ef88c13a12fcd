"""`webapp serve --stdio`: MCP on stdin/stdout while the HTTP port keeps serving pages."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import mcp_types
from mcp import Client

from tests.support.e2e import child_env, stdio_parameters, wait_http


async def test_stdio_lists_and_calls_tools_while_the_http_port_serves_pages(tmp_path: Path) -> None:
    async with Client(stdio_parameters(db=tmp_path / "stdio.db")) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        echo = await client.call_tool("echo", {"text": "over stdio"})
        caller = (await client.call_tool("whoami", {})).structured_content
        assert caller is not None
        page = await wait_http(caller["base_url"] + "/")
    assert "echo" in names
    assert isinstance(echo.content[0], mcp_types.TextContent)
    assert echo.content[0].text == "over stdio"
    assert caller["session_id"] == "stdio"
    assert caller["protocol"] == "stdio"
    assert page.status_code == 200
    assert "webapp test home" in page.text


async def test_stdout_carries_only_json_rpc_and_the_server_stops_when_stdin_closes(tmp_path: Path) -> None:
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "boom", "arguments": {}}},
    ]
    process = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "webapp", "--stdio", "--port", "0", "--app", "tests.support.apps:build"],
        *["--db", str(tmp_path / "stdio.db")],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path,
        env=child_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    async with asyncio.timeout(60):
        process.stdin.write("".join(json.dumps(message) + "\n" for message in messages).encode())
        replies = [json.loads(await process.stdout.readline()) for _ in range(3)]
        process.stdin.close()  # end of input: the whole server stops
        rest, stderr = await process.communicate()
    assert rest == b""
    assert sorted(reply["id"] for reply in replies) == [1, 2, 3]
    assert all(reply["jsonrpc"] == "2.0" and "result" in reply for reply in replies)
    assert next(reply for reply in replies if reply["id"] == 3)["result"]["isError"] is True
    assert "webapp serving on http://127.0.0.1:" in stderr.decode()
    assert "boom: a stray print" in stderr.decode()
    assert process.returncode == 0, stderr.decode()
