"""1,000 open/close cycles of MCP sessions, views and tabs leave every registry at its starting size: the bridge's
views, the SDK session manager's sessions, bearer auth's session owners and NiceGUI's `Client.instances`.

950 cycles run in process (simulated tabs); 50 use real Chromium tabs on an in-process uvicorn server. Each cycle
opens a legacy session (bearer token), opens a view, attaches a tab, acts on the view, closes the tab and DELETEs
the session; short durations make NiceGUI delete lost tabs and the sweeper expire closed views quickly.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
import pytest
from playwright.async_api import Browser, BrowserContext

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_requests import LEGACY, call_in_session, jsonrpc_result, open_session
from tests.support.fuzz_server import InProcess, Sizes, Tab, in_process_server, wait_until
from webapp.server.mcp_adapter import SDKChangedError, open_session_count

WORKERS = 10  # principals cycling at once; each waits for its previous tab to be gone before its next view
TOKENS = {f"churner{n}": f"churn-token-{n}-3b8e1f6a9d2c" for n in range(WORKERS)}
IN_PROCESS_CYCLES, BROWSER_CYCLES = 950, 50
OPTIONS: dict[str, Any] = {
    "token": [f"{name}={token}" for name, token in TOKENS.items()],
    "reconnect_grace": 0.05,
    "closed_expiry": 0.05,
    "pending_expiry": 5.0,
    "wait_for_live": 5.0,
    "browser_confirm": False,
}


async def delete_session(http: httpx2.AsyncClient, token: str, session_id: str) -> None:
    headers = {"Authorization": f"Bearer {token}", "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
    response = await http.delete("/mcp", headers=headers)
    assert response.status_code == 200, response.text


async def open_counter(http: httpx2.AsyncClient, token: str) -> tuple[str, str]:
    """A new session and its new counter view (the principal's previous one is closed): (session id, view URL)."""
    session_id = await open_session(http, token)
    opened = jsonrpc_result(await call_in_session(http, token, session_id, "counter", {"title": "churn"}))
    assert opened is not None and opened["structuredContent"]["state"] == "pending", opened
    return session_id, str(opened["structuredContent"]["url"])


async def act(http: httpx2.AsyncClient, token: str, session_id: str) -> None:
    result = jsonrpc_result(await call_in_session(http, token, session_id, "counter_increment", {}))
    assert result is not None and not result["isError"], result


async def settled(server: InProcess, baseline: Sizes, timeout: float = 15.0) -> Sizes:
    """Wait (bounded) until lost tabs are deleted and closed views expired; the sizes then."""
    await wait_until(lambda: server.sizes() == baseline, timeout, f"the registries returning to {baseline}")
    return server.sizes()


async def in_process_cycles(server: InProcess, http: httpx2.AsyncClient, token: str, cycles: int) -> None:
    """One principal's cycles, one after another."""
    previous: Tab | None = None
    for _ in range(cycles):
        if previous is not None:
            async with asyncio.timeout(5):
                await previous.deleted.wait()  # its view is closed now, so the next opening makes a new one
        session_id, url = await open_counter(http, token)
        previous = await server.open_tab(url)
        await server.attached(previous)
        await act(http, token, session_id)
        previous.disconnect()  # NiceGUI deletes the client after the reconnect grace; the view closes, then expires
        await delete_session(http, token, session_id)


async def test_a_thousand_session_view_and_tab_cycles_leave_every_registry_at_its_start_size(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = tmp_path_factory.mktemp("churn")
    async with in_process_server(folder, counter_app, **OPTIONS) as server, server.http() as http:
        baseline = server.sizes()
        started = time.perf_counter()
        per_worker = IN_PROCESS_CYCLES // WORKERS
        await asyncio.gather(*(in_process_cycles(server, http, token, per_worker) for token in TOKENS.values()))
        busy = server.sizes()
        after = await settled(server, baseline)
        print(
            f"churn: {per_worker * WORKERS} in-process cycles in {time.perf_counter() - started:.1f} s; "
            f"start {baseline}, right after the last cycle {busy}, settled {after}"
        )
    assert per_worker * WORKERS == IN_PROCESS_CYCLES and after == baseline


async def browser_cycle(server: InProcess, http: httpx2.AsyncClient, context: BrowserContext, token: str) -> None:
    session_id, url = await open_counter(http, token)
    page = await context.new_page()
    try:
        await page.goto(url)
        view = server.bridge.registry.by_attach_key(url.rsplit("key=", 1)[1])
        assert view is not None
        await wait_until(lambda: view.is_live, 10.0, "Chromium attaching its tab")
        await act(http, token, session_id)
        await page.get_by_text("1", exact=True).wait_for(timeout=10_000)
    finally:
        await page.close()  # the tab is gone: NiceGUI deletes its client after the reconnect grace
    await delete_session(http, token, session_id)
    await wait_until(lambda: not view.is_open, 10.0, "the closed tab closing its view")


async def test_fifty_cycles_with_real_chromium_tabs_leave_every_registry_at_its_start_size(
    tmp_path_factory: pytest.TempPathFactory, browser: Browser
) -> None:
    folder = tmp_path_factory.mktemp("churn-browser")
    async with in_process_server(folder, counter_app, serve=True, **OPTIONS) as server, server.http() as http:
        baseline = server.sizes()
        started = time.perf_counter()
        tokens = list(TOKENS.values())[:5]  # five tabs at a time, one per principal
        context = await browser.new_context()  # one profile for all tabs: its cache keeps NiceGUI's static files
        try:
            for _ in range(BROWSER_CYCLES // len(tokens)):
                await asyncio.gather(*(browser_cycle(server, http, context, token) for token in tokens))
        finally:
            await context.close()
        after = await settled(server, baseline, timeout=30.0)
        print(f"churn: {BROWSER_CYCLES} Chromium cycles in {time.perf_counter() - started:.1f} s; end {after}")
    assert after == baseline


def test_the_session_count_comes_from_the_sdk_manager_and_fails_loudly_when_it_moves() -> None:
    class Moved:
        pass

    with pytest.raises(SDKChangedError, match="_server_instances"):
        open_session_count(Moved())  # type: ignore[arg-type]
