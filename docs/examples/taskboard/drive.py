"""An agent in a few lines: the official MCP client opens the task board, plans a release on it and reads it back.

Run it against a running server: `python -m docs.examples.taskboard.drive http://127.0.0.1:8080/mcp`, then open
the URL it prints within ten seconds (the board's calls wait that long for its tab).
"""

from __future__ import annotations

import asyncio
import sys

import mcp_types
from mcp import Client

__all__ = ["main", "open_board", "plan_release", "text_of"]


def text_of(result: mcp_types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


async def open_board(client: Client) -> str:
    """Open (or find) this agent's board; the URL of its page."""
    opened = await client.call_tool("taskboard", {"title": "Release 1.0"})
    assert opened.structured_content is not None, text_of(opened)
    return str(opened.structured_content["url"])


async def plan_release(client: Client) -> str:
    """Add three tasks, start the first, and answer the board's summary (its data, chart, rules and suggestions)."""
    added = [
        await client.call_tool("taskboard_add_task", {"title": title})
        for title in ("Write the changelog", "Tag the release", "Announce it")
    ]
    first = added[0].structured_content
    assert first is not None, text_of(added[0])  # an action that returns a pydantic model answers structured
    await client.call_tool("taskboard_move_task", {"task_id": first["id"], "to": "doing"})
    return text_of(await client.call_tool("taskboard_summary", {}))


async def main(mcp_url: str) -> None:
    async with Client(mcp_url) as client:
        print("Open the board:", await open_board(client), flush=True)
        print(await plan_release(client))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080/mcp"))
