"""In-process servers for the fuzz, isolation and churn tests: NiceGUI's own app with the real hosting (Host/Origin
guard, bearer auth, `/mcp` with its session manager), driven over httpx2's ASGI transport — or, with `serve=True`,
also by uvicorn on a real loopback port for Chromium. Tabs without a browser are real NiceGUI clients whose socket
handshake is simulated the way NiceGUI's own `User` test fixture does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx
import httpx2
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from nicegui import Client as NiceClient
from nicegui import app, core, ui
from nicegui.nicegui import _on_handshake  # pyright: ignore[reportPrivateUsage]
from nicegui.storage import Storage
from nicegui.testing.general import nicegui_reset_globals, prepare_simulation

from tests.support.e2e import STATE_KEY
from webapp.bridge.dispatch import Bridge
from webapp.bridge.registry import ViewRecord
from webapp.core.auth import BearerAuth
from webapp.core.settings import Settings
from webapp.server.composition import WebApp
from webapp.server.hosting import install, reserve_port
from webapp.server.mcp_adapter import open_session_count

__all__ = ["InProcess", "Sizes", "Tab", "in_process_server", "wait_until"]

T = TypeVar("T")
_CLIENT_ID = re.compile(r"'client_id': '([0-9a-f-]+)'")
_WAIT = 5.0


async def wait_until(condition: Callable[[], bool], timeout: float = _WAIT, what: str = "a condition") -> None:
    """Return once `condition()` holds, re-checking as the event loop runs other tasks; TimeoutError after
    `timeout` seconds. (For states no event announces, e.g. an SDK session leaving its table.)"""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout} s")
        await asyncio.sleep(0.005)


@dataclass(frozen=True, slots=True)
class Sizes:
    """The sizes of every registry a caller or tab can grow (the call log's masker holds the secrets of live views
    and sessions)."""

    views: int
    sessions: int
    session_owners: int
    clients: int
    masked_secrets: int


class Tab:
    """A NiceGUI client of a page whose socket handshake was simulated; `disconnect()` loses the socket, and NiceGUI
    deletes the client after the page's reconnect grace, as it does when a browser tab is closed."""

    def __init__(self, client: NiceClient, socket_id: str) -> None:
        self.client = client
        self.socket_id = socket_id
        self.deleted = asyncio.Event()
        client.on_delete(self.deleted.set)

    def disconnect(self) -> None:
        self.client.handle_disconnect(self.socket_id)

    async def closed(self, timeout: float = _WAIT) -> None:
        """Disconnect and wait (bounded) until NiceGUI deleted the client."""
        if not self.client.is_deleted:
            self.disconnect()
            async with asyncio.timeout(timeout):
                await self.deleted.wait()


@dataclass
class InProcess:
    """One running server: the `WebApp`, its bridge, NiceGUI's app and the MCP session manager."""

    webapp: WebApp
    bridge: Bridge
    manager: StreamableHTTPSessionManager
    base_url: str
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run `coroutine` on the server's event loop from synchronous code (hypothesis examples and state
        machines); the loop must be idle, i.e. called from a synchronous test."""
        return self.loop.run_until_complete(asyncio.wait_for(coroutine, timeout))

    @property
    def host(self) -> str:
        return self.base_url.removeprefix("http://")

    def http(self, token: str | None = None, headers: Mapping[str, str] | None = None) -> httpx2.AsyncClient:
        """An httpx2 client talking to the app in process (Host is the serving address)."""
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        transport = httpx2.ASGITransport(app=core.app)
        return httpx2.AsyncClient(transport=transport, base_url=self.base_url, headers=sent, timeout=30)

    @contextlib.asynccontextmanager
    async def mcp(
        self, token: str | None = None, *, mode: Literal["auto", "legacy"] = "legacy"
    ) -> AsyncGenerator[Client]:
        """The official MCP client in process (`legacy`: a 2025-11-25 session; `auto`: sessionless 2026-07-28)."""
        async with (
            self.http(token) as http,
            Client(streamable_http_client(self.base_url + "/mcp", http_client=http), mode=mode) as client,
        ):
            yield client

    async def open_tab(self, url: str) -> Tab:
        """Load a page (`url` may be absolute) and complete its socket handshake, like a browser tab."""
        path = url.removeprefix(self.base_url)
        transport = httpx.ASGITransport(app=core.app)
        async with httpx.AsyncClient(transport=transport, base_url=self.base_url, timeout=30) as web:
            page = await web.get(path)
        page.raise_for_status()
        found = _CLIENT_ID.search(page.text)
        if found is None:
            raise AssertionError(f"GET {path[:40]} gave no NiceGUI page")
        client = NiceClient.instances[found.group(1)]
        socket_id = f"test-{uuid.uuid4()}"
        tab = Tab(client, socket_id)
        data = {"client_id": client.id, "tab_id": str(uuid.uuid4()), "document_id": str(uuid.uuid4())}
        if not await _on_handshake(socket_id, data):
            raise AssertionError("the simulated socket handshake was refused")
        return tab

    def view_of(self, tab: Tab) -> ViewRecord | None:
        """The view `tab` shows, once it is attached."""
        return next((view for view in self.bridge.registry if view.client is tab.client), None)

    async def attached(self, tab: Tab, timeout: float = _WAIT) -> ViewRecord:
        """Wait (bounded) until `tab` is the live tab of a view; that view."""
        await wait_until(lambda: (v := self.view_of(tab)) is not None and v.is_live, timeout, "attaching a tab")
        view = self.view_of(tab)
        assert view is not None
        return view

    def sizes(self) -> Sizes:
        return Sizes(
            views=len(self.bridge.registry),
            sessions=open_session_count(self.manager),
            session_owners=_session_owners(),
            clients=len(NiceClient.instances),
            masked_secrets=len(self.webapp.calllog.masker),
        )

    async def expire_closed_views(self) -> None:
        """Run the expiry sweep as if the pending and closed expiries had passed (no waiting for them)."""
        settings = self.bridge.settings
        await self.bridge.sweep(time.time() + max(settings.pending_expiry, settings.closed_expiry) + 1)


def _session_owners() -> int:
    """Entries in the bearer-auth table of which principal opened which session (0 when auth is off)."""
    layer: Any = core.app.middleware_stack
    while layer is not None:
        if isinstance(layer, BearerAuth):
            return len(layer.sessions)
        layer = getattr(layer, "app", None)
    return 0


@contextlib.asynccontextmanager
async def _serving(port_socket: socket.socket) -> AsyncGenerator[None]:
    """uvicorn serving NiceGUI's app on the reserved socket, in this event loop (it runs the lifespan)."""
    config = uvicorn.Config(core.app, lifespan="on", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[port_socket]), name="uvicorn in process")
    await wait_until(lambda: server.started or task.done(), 20.0, "uvicorn starting")
    if task.done():
        task.result()
    try:
        yield
    finally:
        server.should_exit = True
        async with asyncio.timeout(20):
            await task


@contextlib.asynccontextmanager
async def in_process_server(
    folder: Path, build: Callable[[WebApp], Bridge], *, serve: bool = False, **settings: Any
) -> AsyncGenerator[InProcess]:
    """A server whose app factory `build` returns its bridge; `settings` are `Settings` fields (db and port are set
    here). With `serve`, uvicorn also listens on a free loopback port (for real browsers)."""
    if getattr(core.app.state, "webapp_in_process", False):
        raise RuntimeError("an in-process server is already running: NiceGUI's app holds one at a time")
    core.app.state.webapp_in_process = True
    saved_storage = Storage.path
    Storage.path = folder / "nicegui-storage"
    app.storage = Storage()
    port_socket = reserve_port("127.0.0.1", 0) if serve else None
    port = port_socket.getsockname()[1] if port_socket is not None else 8123
    saved_lifespan = core.app.router.lifespan_context
    try:
        with nicegui_reset_globals():
            os.environ["NICEGUI_USER_SIMULATION"] = "true"  # ui.run only configures the app
            try:
                prepare_simulation()
                shared = {"request_state_key": STATE_KEY} if settings.get("redis_url") else {}
                webapp = WebApp(Settings.model_validate({"db": folder / "app.db", "port": port, **shared, **settings}))
                bridge = build(webapp)
                core.app.state.webapp_installed = False
                install(webapp, core.app)
                grace = webapp.settings.reconnect_grace
                ui.run(reconnect_timeout=grace, show_welcome_message=False)
            finally:
                os.environ.pop("NICEGUI_USER_SIMULATION", None)
            manager: StreamableHTTPSessionManager = core.app.state.webapp_session_manager
            server = InProcess(webapp, bridge, manager, f"http://127.0.0.1:{port}", asyncio.get_running_loop())
            if port_socket is not None:
                async with _serving(port_socket):
                    yield server
            else:
                async with core.app.router.lifespan_context(core.app):
                    yield server
    finally:
        core.app.router.lifespan_context = saved_lifespan
        core.app.state.webapp_installed = False
        core.app.state.webapp_in_process = False
        if port_socket is not None:
            port_socket.close()
        Storage.path = saved_storage
