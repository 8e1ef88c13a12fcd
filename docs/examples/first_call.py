"""A first agent from Python: list the server's tools, call a plain one, and open the inventory view.

Run it while `make run` serves: `.venv/bin/python -m docs.examples.first_call http://127.0.0.1:8080/mcp`.
"""

from __future__ import annotations

import asyncio
import sys

import mcp_types
from mcp import Client

__all__ = ["first_call"]


async def first_call(mcp_url: str) -> list[str]:
    """The lines this script prints: the tools, the warehouses, and the URL of the opened view."""
    async with Client(mcp_url) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        listed = await client.call_tool("warehouses", {"action": "list"})
        table = next(block.text for block in listed.content if isinstance(block, mcp_types.TextContent))
        opened = await client.call_tool("inventory", {"warehouse_code": "BER"})
        assert opened.structured_content is not None, opened.content
        return [f"tools: {', '.join(tools)}", table, f"open the view: {opened.structured_content['url']}"]


if __name__ == "__main__":
    for line in asyncio.run(first_call(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080/mcp")):
        print(line)
