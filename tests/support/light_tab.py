"""A light stand-in for a browser tab of a NiceGUI page: it loads the page over HTTP, connects the page's socket
the way `nicegui.js` does (the implicit handshake in the socket's query), answers JavaScript requests and calls'
confirmations, acknowledges messages like a tab, and renders nothing. Benchmarks open many of them where Chromium
tabs would be too heavy. `python -m tests.support.light_tab URL` runs them in a process of their own (so that their work
does not slow the process that measures): each line `open N` on stdin opens tabs up to N and answers `open N`
with the number of messages the tabs received so far; `move URL…` makes every tab whose socket drops from then on
come back, and answers `move`: it connects again to the same page, as nicegui.js does, and when that fails (the
tab's worker went away, or no longer has the page) loads its view again on one of those servers (by its key, as a
browser reloads through a load balancer that lost the tab's worker); `loads` answers `loads K`, the page loads of all
tabs so far (tries that failed and were tried again included); end of input closes them.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import itertools
import json
import logging
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import socketio
from socketio.exceptions import SocketIOError

__all__ = ["LightTab", "LightTabs"]

_QUERY = re.compile(r"query: (\{.*?\}),\n")
_KEY = re.compile(r"[?&]key=([\w-]+)")
ACK_INTERVAL = 3.0  # seconds, as nicegui.js acknowledges
_REOPEN_FOR = 60.0  # seconds a moving tab keeps trying to load its view elsewhere
_REOPEN_PAUSE = 0.5  # seconds between those tries


class LightTab:
    """One open page: `open()` loads and connects it, `close()` disconnects (the server sees a closed tab)."""

    def __init__(
        self, url: str, elsewhere: Callable[[], str | None] = lambda: None, http: httpx.AsyncClient | None = None
    ) -> None:
        self.url = url
        self.loads = 0
        """Page loads so far (a load that failed and was tried again counts each time)."""
        self.messages = 0
        self.key = ""
        """The view's attach key, once the page said it (its `history.replaceState`)."""
        self._elsewhere = elsewhere
        self._http = http  # shared by many tabs: a client of its own costs ~20 ms of CPU (its TLS context)
        self._socket = self._new_socket()
        self._client_id = ""
        self._connection: tuple[str, dict[str, Any]] = ("", {})  # the page's server and socket query
        self._next_message_id = 0
        self._acked = -1
        self._acks: asyncio.Task[None] | None = None
        self._moving: asyncio.Task[None] | None = None
        self._moved = False  # its page is on a server `move` named (its first one is the one that goes away)

    def _new_socket(self) -> socketio.AsyncClient:
        socket = socketio.AsyncClient(reconnection=False)
        socket.on("*", self._on_message)
        socket.on("disconnect", self._on_disconnect)
        return socket

    async def open(self) -> None:
        self.loads += 1
        if self._http is not None:
            page = await self._http.get(self.url, timeout=30)
        else:
            async with httpx.AsyncClient() as http:
                page = await http.get(self.url, timeout=30)
        page.raise_for_status()
        match = _QUERY.search(page.text)
        if match is None:
            raise RuntimeError(f"{self.url} is not a NiceGUI page")
        query: dict[str, Any] = ast.literal_eval(match.group(1))  # the template writes a Python dict
        self._client_id = str(query["client_id"])
        self._next_message_id = int(query["next_message_id"])
        tab = str(uuid.uuid4())
        query |= {"document_id": str(uuid.uuid4()), "tab_id": tab, "old_tab_id": tab, "implicit_handshake": "true"}
        self._connection = "/".join(self.url.split("/", 3)[:3]), query
        await self._connect()

    async def _connect(self) -> None:
        base, query = self._connection
        await self._socket.connect(
            f"{base}?{urlencode(query | {'next_message_id': self._next_message_id})}",
            socketio_path="/_nicegui_ws/socket.io",
            transports=["websocket"],
            headers={"Origin": base},
            wait_timeout=30,
        )
        self._acks = asyncio.create_task(self._ack_forever())

    async def _on_disconnect(self, *_reason: Any) -> None:
        """Its socket dropped: once `move` named other servers, the tab comes back (`_come_back`)."""
        if self._elsewhere() is None or not self.key or self._moving is not None:
            return
        if self._acks is not None:
            self._acks.cancel()
        self._moving = asyncio.create_task(self._come_back())

    async def _come_back(self) -> None:
        """A page on a server `move` named connects again, as nicegui.js does when its socket drops (a server whose
        loop was too busy to ping in time keeps the page: no page load); when that fails (the server no longer has the
        page), and for a page on its first server (which went away), the view loads again elsewhere, as nicegui.js
        reloads."""
        if self._moved:
            self._socket = self._new_socket()
            try:
                await self._connect()
                self._moving = None
                return
            except SocketIOError:
                pass
        await self._reopen()

    async def _reopen(self) -> None:
        """Load the view by its key on the next server `move` named, again after a failed try (as a browser's page
        reloads until it loads), for at most a minute."""
        deadline = asyncio.get_running_loop().time() + _REOPEN_FOR
        while (base := self._elsewhere()) is not None:
            self.url = f"{base}{urlsplit(self.url).path}?key={self.key}"
            self._socket = self._new_socket()
            try:
                await self.open()
                self._moved = True
                break
            except (httpx.HTTPError, SocketIOError):
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(_REOPEN_PAUSE)
        self._moving = None

    async def close(self) -> None:
        self._elsewhere = lambda: None
        if self._moving is not None:
            with contextlib.suppress(Exception):
                await self._moving
        if self._acks is not None:
            self._acks.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._acks
        await self._socket.disconnect()

    async def _ack_forever(self) -> None:
        while True:
            await asyncio.sleep(ACK_INTERVAL)
            if self._acked < self._next_message_id and self._socket.connected:
                self._acked = self._next_message_id
                await self._socket.emit("ack", {"client_id": self._client_id, "next_message_id": self._acked})

    async def _on_message(self, event: str, data: Any = None) -> None:
        self.messages += 1
        if isinstance(data, dict) and "_id" in data:
            self._next_message_id = max(self._next_message_id, int(data["_id"]) + 1)
        if event == "run_javascript" and isinstance(data, dict) and (key := _KEY.search(str(data.get("code", "")))):
            self.key = key.group(1)
        if event == "run_javascript" and isinstance(data, dict) and data.get("request_id"):
            response = {"client_id": self._client_id, "request_id": data["request_id"], "result": None}
            await self._socket.emit("javascript_response", response)
        if event == "update" and isinstance(data, dict):
            for key, element in data.items():
                await self._confirm(key, element)

    async def _confirm(self, key: str, element: Any) -> None:
        """Answer a call's confirmation (webapp/bridge/confirm.js) as the tab's nicegui.js would after the update."""
        if not isinstance(element, dict) or element.get("update_method") != "confirm":
            return
        ask = element.get("props", {}).get("ask")  # NiceGUI leaves out what an element does not have
        if not ask:
            return
        for listener in element.get("events", []):
            if listener.get("type") == "confirmed":
                arguments = [json.dumps(ask)]
                event = {"id": int(key), "client_id": self._client_id, "listener_id": listener["listener_id"]}
                await self._socket.emit("event", event | {"args": arguments})


class LightTabs:
    """Light tabs of one page in a child process: `await open(n)` has n of them open; `close()` ends them."""

    def __init__(self, url: str) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.light_tab", url],
            cwd=Path(__file__).resolve().parents[2],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    @property
    def pid(self) -> int:
        """The tabs' process (the CPU it uses is the tabs', not the servers')."""
        return self._process.pid

    async def open(self, count: int) -> list[int]:
        """Open tabs up to `count`; returns how many messages each tab has received so far."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(f"open {count}\n")
        self._process.stdin.flush()
        async with asyncio.timeout(120):
            line = await asyncio.get_running_loop().run_in_executor(None, self._process.stdout.readline)
        if not line.startswith("open "):
            raise RuntimeError(f"the light tabs failed (exit code {self._process.poll()})")
        return [int(number) for number in line.split()[2:]]

    async def loads(self) -> int:
        """The page loads of all tabs so far (tries that failed and were tried again included)."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write("loads\n")
        self._process.stdin.flush()
        async with asyncio.timeout(30):
            line = await asyncio.get_running_loop().run_in_executor(None, self._process.stdout.readline)
        if not line.startswith("loads "):
            raise RuntimeError(f"the light tabs failed (exit code {self._process.poll()})")
        return int(line.split()[1])

    async def move(self, *base_urls: str) -> None:
        """From now on a tab whose socket drops loads its view again on one of `base_urls` (in turn)."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(f"move {' '.join(base_urls)}\n")
        self._process.stdin.flush()
        async with asyncio.timeout(30):
            line = await asyncio.get_running_loop().run_in_executor(None, self._process.stdout.readline)
        if line.strip() != "move":
            raise RuntimeError(f"the light tabs failed (exit code {self._process.poll()})")

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(30)
        if self._process.stdout is not None:
            self._process.stdout.close()


async def _serve(url: str) -> None:
    tabs: list[LightTab] = []
    survivors: list[str] = []
    turns = itertools.count()

    def elsewhere() -> str | None:
        return survivors[next(turns) % len(survivors)] if survivors else None

    # the tabs' sockets dropping with their worker is what a storm is about, not an error worth a line per tab
    logging.getLogger("engineio.client").setLevel(logging.CRITICAL)
    http = httpx.AsyncClient(limits=httpx.Limits(max_connections=None, max_keepalive_connections=100))
    loop = asyncio.get_running_loop()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            verb, *words = line.split()
            if verb == "move":
                survivors[:] = words
                print("move", flush=True)
                continue
            if verb == "loads":
                print(f"loads {sum(tab.loads for tab in tabs)}", flush=True)
                continue
            count = int(words[0])
            while len(tabs) < count:
                tab = LightTab(url, elsewhere, http)
                await tab.open()
                tabs.append(tab)
            print(f"open {len(tabs)} {' '.join(str(tab.messages) for tab in tabs)}", flush=True)
    finally:
        for tab in tabs:
            await tab.close()
        await http.aclose()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1]))
