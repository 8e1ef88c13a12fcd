"""Views outlive the server process (they are stored in its database, SQLite or Postgres), and `reopen = "new"`
replaces them."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path

from playwright.async_api import Page, expect

from tests.support.e2e import RunningServer, run_server
from tests.support.views import COUNTER_APP, attach_key, connect, structured, texts

SETTINGS = ("--wait-for-live", "15", "--reconnect-grace", "1")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def start(stack: contextlib.ExitStack, *args: str, db: Path | str, cwd: Path | None = None) -> RunningServer:
    """Start a server without blocking the event loop the browser runs on."""
    return await asyncio.to_thread(stack.enter_context, run_server(*args, app=COUNTER_APP, db=db, cwd=cwd))


async def test_a_restart_keeps_the_view_its_state_and_its_tab(tmp_path: Path, database: str, page: Page) -> None:
    args = (*SETTINGS, "--port", str(free_port()))
    db = database
    with contextlib.ExitStack() as first_run:
        first = await start(first_run, *args, db=db, cwd=tmp_path)
        async with connect(first, mode="legacy") as client:
            data = structured(await client.call_tool("counter", {"title": "Persisted"}))
            await page.goto(str(data["url"]))
            assert structured(await client.call_tool("counter_increment", {"by": 4})) == {"count": 4}
            await expect(page.get_by_test_id("count")).to_have_text("4")
        await asyncio.to_thread(first_run.close)

        with contextlib.ExitStack() as second_run:
            second = await start(second_run, *args, db=db, cwd=tmp_path)
            async with connect(second, mode="legacy") as client:
                # the open tab reconnects, reloads and re-attaches by its URL; the call waits for it
                bumped = await client.call_tool("counter_increment", {"_view": data["view"]})
                assert structured(bumped) == {"count": 5}
                await expect(page.get_by_test_id("count")).to_have_text("5")
                await expect(page.get_by_test_id("title")).to_have_text("Persisted")
                assert structured(await client.call_tool("counter_increment", {})) == {"count": 6}
            await expect(page.get_by_test_id("count")).to_have_text("6")
            assert attach_key(page.url) == attach_key(str(data["url"]))
            await asyncio.to_thread(second_run.close)
            assert data["view"] not in second.output and attach_key(str(data["url"])) not in second.output


async def test_opening_again_with_reopen_new_replaces_the_previous_view(tmp_path: Path, page: Page) -> None:
    with contextlib.ExitStack() as stack:
        server = await start(stack, "--reopen", "new", "--reconnect-grace", "1", db=tmp_path / "new.db")
        async with connect(server, mode="legacy") as client:
            first = structured(await client.call_tool("counter", {}))
            await page.goto(str(first["url"]))
            await expect(page.get_by_test_id("count")).to_have_text("0")
            second = structured(await client.call_tool("counter", {}))
            assert second["view"] != first["view"] and second["reused"] is False
            await expect(page.get_by_text("This view was replaced by a newer one.", exact=False)).to_be_visible()
            replaced = await client.call_tool("counter_increment", {"_view": first["view"]})
            assert texts(replaced) == [
                '<tool_error code="VIEW_REPLACED" severity="error">\n'
                f"<message>The view '{first['view']}' was replaced by a newer 'counter' view.</message>\n"
                "<recovery>Retry without _view, or call 'counter'.</recovery>\n"
                "</tool_error>"
            ]
            await page.goto(str(second["url"]))
            assert structured(await client.call_tool("counter_increment", {})) == {"count": 1}
            await expect(page.get_by_test_id("count")).to_have_text("1")
        await asyncio.to_thread(stack.close)
