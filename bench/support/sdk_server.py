"""A plain tool served by the `mcp` SDK's own low-level server, with no webapp code on its path: the yardstick that
does not move with the framework. Served the way `webapp serve` serves (uvicorn's defaults, NiceGUI's `wsproto`, a
loopback port), it prints `sdk serving on http://127.0.0.1:PORT` once it listens.

Run: `python -m bench.support.sdk_server` (port 0: any free one); `sdk_server()` runs it as a subprocess."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
from collections.abc import Generator
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

from tests.support.e2e import RunningServer, child_env

__all__ = ["TOOL", "sdk_server"]

TOOL = "warehouses"
_WAREHOUSES = "code|name\nBER|Berlin\nHAM|Hamburg\nMUC|Munich"  # a plain answer as long as the inventory's


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {"action": {"type": "string"}}, "additionalProperties": False}
    return types.ListToolsResult(tools=[types.Tool(name=TOOL, description="The warehouses.", input_schema=schema)])


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=_WAREHOUSES)])


def main() -> None:
    server = Server("sdk-floor", on_list_tools=_list_tools, on_call_tool=_call_tool)
    app = server.streamable_http_app()
    listener = socket.create_server(("127.0.0.1", 0))
    print(f"sdk serving on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", ws="wsproto")
    uvicorn.Server(config).run(sockets=[listener])


@contextlib.contextmanager
def sdk_server() -> Generator[RunningServer]:
    """The SDK's server in a subprocess until the block ends; its `mcp_url` is the tool's endpoint."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.support.sdk_server"],
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    running = RunningServer(process)
    running.pump(process.stdout)
    try:
        running.base_url = running.wait_for_output(re.compile(r"sdk serving on (\S+)")).group(1)
        yield running
    finally:
        running.stop()


if __name__ == "__main__":
    main()
