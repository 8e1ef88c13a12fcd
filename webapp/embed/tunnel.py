"""Tunnelled views (apps.md §13 "Tunnelled"): a view page that runs in a host's frame with no connection to the server,
its socket carried by tool calls. `Tunnels` keeps each tunnel's binding (principal, MCP session, view, NiceGUI client,
engine.io session) and feeds its engine.io long-polling requests to NiceGUI's socket app in process.

A tunnel id is 256 random bits, known only to the frame that spent the view's boot ticket; the server keeps its
SHA-256 digest. Every request is checked before anything reaches NiceGUI, and built by the server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qs, urlencode

from starlette.types import ASGIApp, Message

from webapp.bridge.registry import mask
from webapp.embed.answers import Answer, Answers
from webapp.embed.directory import TunnelDirectory
from webapp.embed.packets import named_clients

__all__ = ["IDLE", "MAX_PAYLOAD", "Refused", "Tunnel", "Tunnels", "UnknownTunnel"]

IDLE = 60.0
"""Seconds a tunnel lives without a call; then it is closed and its tab counts as closed."""
MAX_PAYLOAD = 1_000_000
"""engine.io's `maxPayload`: the largest request body a tunnel passes on."""
MAX_WAIT_MS = 25_000  # a held GET answers within this, below the hosts' 60 s call timeout
DEFAULT_WAIT_MS = 20_000
_SOCKET_PATH = "/socket.io/"  # NiceGUI's socket app, mounted at /_nicegui_ws/
_QUERY = frozenset(
    {
        "client_id",
        "next_message_id",
        "document_id",
        "tab_id",
        "old_tab_id",
        "implicit_handshake",
        "EIO",
        "transport",
        "t",
    }
)


class UnknownTunnel(Exception):
    """No such tunnel for this caller: forged, spent, expired, another principal's, unknown or closed (one answer
    for every cause, so none can be told apart)."""


class Refused(Exception):
    """A request the tunnel does not pass on (the message says which rule it broke)."""


@dataclass(eq=False)
class Tunnel:
    """One tunnel's binding and state (in memory on the worker that holds the view's tab)."""

    digest: str
    view: str
    principal: str | None
    session: str | None
    client_id: str | None = None
    sid: str | None = None
    seen: float = 0.0  # when a call of the tunnel last passed (a refused one does not keep it alive)
    answers: Answers = field(default_factory=Answers)  # a POST's answer never replaces a held GET's parts
    getting: asyncio.Task[tuple[int, str]] | None = None
    getting_sid: str | None = None  # the engine.io session of the held GET (None: a handshake)
    waiter: int = 0  # the newest call waiting for the held GET: only it takes the GET's answer
    posting: bool = False


def _digest(tunnel: str) -> str:
    return hashlib.sha256(tunnel.encode()).hexdigest()


def _check_packets(body: str, client_id: str | None) -> None:
    """Refused unless every NiceGUI client the POST body's events name is the tunnel's own (NiceGUI's handlers find
    their client by that name, so another one would reach another tab)."""
    try:
        named = named_clients(body)
    except ValueError:
        raise Refused("The body is not an engine.io payload of socket.io packets, as NiceGUI's socket sends.") from None
    if any(name != client_id for name in named):
        raise Refused("An event of the body names another client_id than the one of the page this tunnel rendered.")


class Tunnels:
    """The tunnels of one worker. `socket_app` is NiceGUI's socket app, `disconnect(sid)` ends one of its engine.io
    sessions at once and `session_alive(sid)` says whether it lives; `on_secret`/`on_forget` keep tunnel ids out of
    logs; `clock` tells the seconds that idleness is measured in."""

    def __init__(
        self,
        socket_app: ASGIApp,
        *,
        chunk: int,
        host: Callable[[], str],
        disconnect: Callable[[str], Awaitable[None]],
        session_alive: Callable[[str], bool],
        on_secret: Callable[[str], None] = lambda _: None,
        on_forget: Callable[[str], None] = lambda _: None,
        idle: float = IDLE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._socket_app = socket_app
        self.chunk = chunk
        self._host = host
        self._disconnect = disconnect
        self._session_alive = session_alive
        self._on_secret = on_secret
        self._on_forget = on_forget
        self.idle = idle
        self._clock = clock
        self.worker: str | None = None
        """This worker's id among several (set by `webapp.cluster`): then `directory` says where each tunnel lives."""
        self.directory: TunnelDirectory | None = None
        self._tunnels: dict[str, Tunnel] = {}  # digest -> tunnel
        self._ids: dict[str, str] = {}  # digest -> id, only to forget the id in the log masks

    def __len__(self) -> int:
        return len(self._tunnels)

    # -- life cycle ----------------------------------------------------------------------------------------------

    async def mint(self, view: str, principal: str | None, session: str | None) -> tuple[str, Tunnel]:
        """A new tunnel to `view` (an older one of the view is closed: one tunnel per view)."""
        for older in [tunnel for tunnel in self._tunnels.values() if tunnel.view == view]:
            await self.close(older)
        tunnel_id = secrets.token_urlsafe(32)
        tunnel = Tunnel(_digest(tunnel_id), view, principal, session, seen=self._clock())
        self._tunnels[tunnel.digest] = tunnel
        self._ids[tunnel.digest] = tunnel_id
        self._on_secret(tunnel_id)
        if self.worker is not None and self.directory is not None:
            await self.directory.record(tunnel.digest, self.worker)
        log.info("tunnel %s opened to view %s", mask(tunnel_id), mask(view))
        return tunnel_id, tunnel

    def find(self, tunnel_id: str, principal: str | None, session: str | None) -> Tunnel:
        """The caller's live tunnel `tunnel_id`, or `UnknownTunnel`."""
        tunnel = self._tunnels.get(_digest(tunnel_id)) if tunnel_id else None
        if tunnel is None or tunnel.principal != principal or tunnel.session not in (None, session):
            raise UnknownTunnel
        return tunnel

    async def elsewhere(self, tunnel_id: str) -> str | None:
        """The other worker that holds tunnel `tunnel_id`, if any (None: here, unknown, or a single worker)."""
        digest = _digest(tunnel_id)
        if self.worker is None or self.directory is None or digest in self._tunnels:
            return None
        worker = await self.directory.worker_of(digest)
        return worker if worker != self.worker else None

    async def detach(self, tunnel: Tunnel) -> None:
        """The tunnel's page is going (a reload inside the view): its held GET and its engine.io session end, so its
        NiceGUI client counts as disconnected before the page is rendered again; its answers' parts are dropped."""
        await self._end_session(tunnel)
        tunnel.sid = None
        tunnel.answers.clear()

    def bind_client(self, tunnel: Tunnel, client_id: str) -> None:
        """The NiceGUI client of the page just rendered for `tunnel`: only its socket may use the tunnel."""
        tunnel.client_id = client_id
        tunnel.sid = None

    async def close(self, tunnel: Tunnel) -> None:
        if self._tunnels.pop(tunnel.digest, None) is None:
            return
        tunnel_id = self._ids.pop(tunnel.digest, "")
        if self.worker is not None and self.directory is not None:
            self.directory.forget_soon(tunnel.digest)
        await self.detach(tunnel)
        log.info("tunnel %s closed", mask(tunnel_id))
        self._on_forget(tunnel_id)

    async def sweep(self) -> None:
        """Close the tunnels idle for `idle` seconds: no call passed meanwhile (a held GET counts as a call in
        progress; refused calls count as nothing, so a page that only retries what the tunnel refuses is closed)."""
        now = self._clock()
        for tunnel in list(self._tunnels.values()):
            busy = tunnel.posting or (tunnel.getting is not None and not tunnel.getting.done())
            if not busy and now - tunnel.seen > self.idle:
                await self.close(tunnel)

    async def close_all(self) -> None:
        for tunnel in list(self._tunnels.values()):
            await self.close(tunnel)

    # -- requests ------------------------------------------------------------------------------------------------

    def part(self, tunnel: Tunnel, answer: int, index: int) -> Answer:
        """Part `index` of the tunnel's long answer `answer`."""
        try:
            part = tunnel.answers.part(answer, index)
        except ValueError as error:
            raise Refused(str(error)) from None
        tunnel.seen = self._clock()
        return part

    def answer(self, tunnel: Tunnel, status: int, body: str) -> Answer:
        """The answer's first part and its id (the rest kept for `part` calls, beside the other long answers)."""
        tunnel.seen = self._clock()
        return tunnel.answers.add(status, body, self.chunk)

    async def request(
        self, tunnel: Tunnel, method: Literal["GET", "POST"], query: str, body: str, wait_ms: int
    ) -> Answer:
        """Pass one engine.io long-polling request on to NiceGUI's socket app, after every check."""
        if len(body.encode()) > MAX_PAYLOAD:
            raise Refused(f"The body has {len(body.encode())} bytes; engine.io takes at most {MAX_PAYLOAD}.")
        fields = self._checked_query(tunnel, query)
        if method == "POST":
            self._check_session(tunnel, fields, method)
            _check_packets(body, tunnel.client_id)
            if tunnel.posting:
                raise Refused("A POST of this tunnel is in flight; engine.io sends one at a time.")
            tunnel.posting = True
            try:
                status, text = await self._engineio(tunnel, "POST", fields, body)
            finally:
                tunnel.posting = False
                tunnel.seen = self._clock()
            return self.answer(tunnel, status, text)
        if tunnel.getting is not None and "sid" not in fields:
            await self._end_session(tunnel)  # a handshake: the page's socket started over, it left that session's GET
        self._check_session(tunnel, fields, method)
        if tunnel.getting is not None:
            if tunnel.getting_sid != tunnel.sid:
                raise Refused("A GET of this tunnel is held; resume it with poll instead of sending another.")
            return await self.resume(tunnel, wait_ms)  # the GET sent again (its call lost): it takes the GET's place
        tunnel.getting_sid = fields.get("sid")
        tunnel.getting = asyncio.create_task(self._engineio(tunnel, "GET", fields, body))
        return await self.resume(tunnel, wait_ms)

    async def resume(self, tunnel: Tunnel, wait_ms: int) -> Answer:
        """Wait up to `wait_ms` for the held GET; its answer, or `pending` (the GET goes on: it is never cancelled,
        which would end the engine.io session). A newer call for the same GET (a poll or the GET sent again, when
        this call's answer was lost on its way) takes the answer instead, so none is given twice or lost."""
        getting = tunnel.getting
        if getting is None:
            raise Refused("No GET of this tunnel is held: there is nothing to poll.")
        tunnel.waiter += 1
        waiter = tunnel.waiter
        done, _ = await asyncio.wait({getting}, timeout=min(max(wait_ms, 0), MAX_WAIT_MS) / 1000)
        tunnel.seen = self._clock()
        if not done:
            return Answer(204, pending=True)
        if tunnel.waiter != waiter:  # a poll, or the GET sent again, came after this call: the answer is theirs
            raise Refused("A newer call took this held GET's answer; poll only from the newest call.")
        if tunnel.getting is not getting or getting.cancelled():  # the page was rendered again, or its socket
            return Answer(400, "The engine.io session of this GET was ended.")  # started over: the session is gone
        tunnel.getting = None
        if (error := getting.exception()) is not None:  # the socket app failed: the page's socket reconnects
            log.warning("a tunnel's held GET failed (%s)", type(error).__name__)
            return Answer(500)
        status, text = getting.result()
        return self.answer(tunnel, status, text)

    async def _end_session(self, tunnel: Tunnel) -> None:
        """End the tunnel's held GET (answered or not: nobody will take its answer) and its engine.io session."""
        if tunnel.getting is not None:
            tunnel.getting.cancel()
            tunnel.getting = None
        if tunnel.sid is not None:
            with contextlib.suppress(Exception):
                await self._disconnect(tunnel.sid)

    def _checked_query(self, tunnel: Tunnel, query: str) -> dict[str, str]:
        try:
            parsed = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=20)
        except ValueError:
            raise Refused("The query is not a URL query string.") from None
        if any(len(values) != 1 for values in parsed.values()):
            raise Refused("Each query field may come once.")
        fields = {name: values[0] for name, values in parsed.items()}
        unknown = sorted(set(fields) - _QUERY - {"sid"})
        if unknown:
            raise Refused(f"The query field {unknown[0]!r} is not one NiceGUI's socket sends.")
        if fields.get("EIO") != "4" or fields.get("transport") != "polling":
            raise Refused("A tunnel carries engine.io 4 long-polling only (EIO=4, transport=polling; no upgrade).")
        if tunnel.client_id is None or fields.get("client_id") != tunnel.client_id:
            raise Refused("The client_id is not the one of the page this tunnel rendered.")
        return fields

    def _check_session(self, tunnel: Tunnel, fields: dict[str, str], method: str) -> None:
        sid = fields.get("sid")
        if sid is None:
            if method != "GET" or (tunnel.sid is not None and self._session_alive(tunnel.sid)):
                raise Refused("A new engine.io handshake comes only as a GET, once the tunnel's session closed.")
        elif sid != tunnel.sid:
            raise Refused("The sid is not the engine.io session of this tunnel.")

    async def _engineio(self, tunnel: Tunnel, method: str, fields: dict[str, str], body: str) -> tuple[int, str]:
        payload = body.encode()
        query = urlencode(fields).encode()
        headers = [(b"host", self._host().encode("latin-1")), (b"content-length", str(len(payload)).encode())]
        if method == "POST":
            headers.append((b"content-type", b"text/plain;charset=UTF-8"))
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": _SOCKET_PATH,
            "raw_path": _SOCKET_PATH.encode(),
            "root_path": "",
            "query_string": query,
            "headers": headers,
            "client": ("127.0.0.1", 0),
            "server": ("127.0.0.1", 0),
        }
        started: list[int] = []
        chunks: list[bytes] = []
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": payload, "more_body": False}
            await asyncio.Event().wait()  # the request never disconnects while it is passed on
            raise AssertionError

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.append(int(message["status"]))
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self._socket_app(scope, receive, send)
        status = started[0] if started else 500
        text = b"".join(chunks).decode("utf-8", "replace")
        if method == "GET" and "sid" not in fields and status == 200 and text.startswith("0{"):
            with contextlib.suppress(ValueError, TypeError):
                tunnel.sid = str(json.loads(text[1:])["sid"])  # the handshake: the session this tunnel is bound to
        return status, text


log = logging.getLogger(__name__)
