"""The load of `bench.faults`: agents booking adjustments and transfers with `_call_id`s at a steady rate (retrying a
retryable error with the same id, as an agent should), and an intruder trying other principals' views and sessions."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import re
import secrets
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

import httpx2
import orjson
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["RETRYABLE", "Agents", "Attempt", "Booking", "Intruder", "agent_client"]

RETRYABLE = frozenset(
    {"BRIDGE_UNAVAILABLE", "VIEW_UNAVAILABLE", "VIEW_TIMEOUT", "STORE_UNAVAILABLE", "SERVER_STOPPING"}
)
_CODE = re.compile(r'<tool_error code="([A-Z_]+)"')
_GIVE_UP = 60.0  # seconds an agent keeps retrying one booking
_PAUSE = 0.2  # seconds an agent waits before a retry


@dataclass(frozen=True, slots=True)
class Attempt:
    started: float  # monotonic
    ms: float
    code: str  # "OK", a tool error code, or "HTTP" (the request itself failed: a worker died under it)


@dataclass
class Booking:
    call_id: str
    kind: str  # "adjust" or "transfer"
    effect: dict[tuple[str, str], int]  # (warehouse, sku) -> units
    acked: bool = False


@contextlib.asynccontextmanager
async def agent_client(url: str, token: str, mode: str = "auto") -> AsyncGenerator[Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # pyright: ignore
        yield client


def code_of(result: Any) -> str:
    if not result.is_error:
        return "OK"
    text = result.content[0].text if result.content else ""
    found = _CODE.search(text)
    return found.group(1) if found else "VALIDATION"


@dataclass
class Agents:
    """`len(tokens)` agents, each booking on its own view and SKU every `every` seconds while `running` is set."""

    url: str
    tokens: list[str]
    views: list[str]
    skus: list[str]
    every: float = 0.25
    attempts: list[Attempt] = field(default_factory=list[Attempt])
    bookings: list[Booking] = field(default_factory=list[Booking])
    running: asyncio.Event = field(default_factory=asyncio.Event)
    _busy: int = 0
    _idle: asyncio.Event = field(default_factory=asyncio.Event)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(*(self._agent(number, stop) for number in range(len(self.tokens))))

    async def drained(self, timeout: float = 90.0) -> None:
        """Stop new bookings and wait until every booking in flight was acknowledged (or given up)."""
        self.running.clear()
        async with asyncio.timeout(timeout):
            while self._busy:
                self._idle.clear()
                await self._idle.wait()

    async def _agent(self, number: int, stop: asyncio.Event) -> None:
        """Book one change after another; a client whose request failed under it (its worker killed) is made anew,
        and the booking goes on with the same `_call_id`."""
        rng = random.Random(number)
        state = _Current()
        while not stop.is_set() or state.booking is not None:
            try:
                async with agent_client(self.url, self.tokens[number]) as client:
                    while await self._step(client, number, rng, state, stop):
                        pass
                return
            except Exception:  # the MCP client ends with the request that failed: count it, and go on
                self.attempts.append(Attempt(state.started, (time.monotonic() - state.started) * 1000, "HTTP"))
                await asyncio.sleep(_PAUSE)

    async def _step(
        self, client: Client, number: int, rng: random.Random, state: _Current, stop: asyncio.Event
    ) -> bool:
        """One attempt (starting a new booking when none is open); False once the agent is done."""
        if state.booking is None:
            await self.running.wait()
            if stop.is_set():
                return False
            state.tool, state.booking, state.arguments = self._next(number, rng)
            state.began = time.monotonic()
            self.bookings.append(state.booking)
            self._busy += 1
        state.started = time.monotonic()
        code = code_of(await client.call_tool(state.tool, state.arguments))
        self.attempts.append(Attempt(state.started, (time.monotonic() - state.started) * 1000, code))
        final = code not in RETRYABLE  # OK, or a code an agent does not retry (reported as a miss)
        if final or time.monotonic() - state.began > _GIVE_UP:
            state.booking.acked = code == "OK"
            state.booking = None
            self._busy -= 1
            self._idle.set()
            await asyncio.sleep(self.every)
        else:
            await asyncio.sleep(_PAUSE)
        return True

    def _next(self, number: int, rng: random.Random) -> tuple[str, Booking, dict[str, Any]]:
        call_id = f"a{number}-{next(self._ids)}"
        sku, view = self.skus[number], self.views[number]
        if rng.random() < 0.6:
            delta = rng.choice((1, 2, 3))
            arguments = {"sku": sku, "delta": delta, "reason": f"bench {call_id}", "_view": view, "_call_id": call_id}
            return "inventory_adjust_stock", Booking(call_id, "adjust", {("BER", sku): delta}), arguments
        source, target = ("BER", "HAM") if rng.random() < 0.5 else ("HAM", "BER")
        arguments = {"sku": sku, "from_warehouse": source, "to_warehouse": target, "quantity": 1}
        booking = Booking(call_id, "transfer", {(source, sku): -1, (target, sku): 1})
        return "inventory_transfer_stock", booking, arguments | {"_view": view, "_call_id": call_id}


@dataclass
class _Current:
    """An agent's open booking (kept across a client made anew)."""

    tool: str = ""
    booking: Booking | None = None
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    began: float = 0.0
    started: float = 0.0


@dataclass
class Intruder:
    """Another principal trying the agents' views (`_view`, with their call ids too), guessed handles, and an agent's
    legacy session id with its own token, on both workers. Every attempt must fail."""

    workers: list[str]  # MCP URLs
    balancer: str  # MCP URL behind HAProxy (legacy sessions stick to their worker there)
    token: str
    victim_token: str
    views: list[str]
    attempts: int = 0
    successes: int = 0

    async def run(self, total: int, concurrency: int = 6) -> None:
        session = await self._victim_session()
        per_task = total // concurrency + 1
        await asyncio.gather(*(self._try(task, per_task, session) for task in range(concurrency)))

    async def _victim_session(self) -> str:
        """A legacy session the victim opened (its id, as a sniffer would have it)."""
        headers = {"Authorization": f"Bearer {self.victim_token}", "Accept": "application/json, text/event-stream"}
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "v", "version": "1"},
            },
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            answer = await http.post(self.balancer, json=hello, headers=headers)
            session = answer.headers["mcp-session-id"]
            headers |= {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
            await http.post(
                self.balancer, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
            )
            bind = {"name": "inventory", "arguments": {"warehouse_code": "BER"}}  # the session now routes to its view
            await http.post(
                self.balancer, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": bind}, headers=headers
            )
        return session

    async def _try(self, task: int, count: int, session: str) -> None:
        rng = random.Random(1000 + task)
        async with contextlib.AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(agent_client(url, self.token)) for url in self.workers]
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
            for number in range(count):
                kind = number % 3
                if kind == 2:
                    await self._with_session(http, session, rng)
                    continue
                view = rng.choice(self.views) if kind == 0 else secrets.token_urlsafe(16)
                arguments = {"sku": "FST-1001", "delta": 1, "reason": "intrusion", "_view": view}
                arguments["_call_id"] = f"a{rng.randrange(4)}-{rng.randrange(50)}"  # the agents' own ids
                result = await clients[number % len(clients)].call_tool("inventory_adjust_stock", arguments)
                self._count(not result.is_error)

    async def _with_session(self, http: httpx2.AsyncClient, session: str, rng: random.Random) -> None:
        call = {
            "jsonrpc": "2.0",
            "id": rng.randrange(1 << 30),
            "method": "tools/call",
            "params": {"name": "inventory_refresh_stock", "arguments": {}},
        }
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": "application/json, text/event-stream",
            "Mcp-Session-Id": session,
            "MCP-Protocol-Version": "2025-11-25",
        }
        answer = await http.post(self.balancer, json=call, headers=headers)
        self._count(answer.status_code == 200 and _succeeded(answer.text))

    def _count(self, succeeded: bool) -> None:
        self.attempts += 1
        self.successes += int(succeeded)


def _succeeded(body: str) -> bool:
    """Whether a JSON-RPC answer (plain or as server-sent events) carries a tool result that is not an error."""
    for line in body.splitlines() or [body]:
        text = line.removeprefix("data:").strip()
        if not text.startswith("{"):
            continue
        message = orjson.loads(text)
        result = message.get("result")
        if isinstance(result, dict) and not result.get("isError"):  # pyright: ignore[reportUnknownMemberType]
            return True
    return False
