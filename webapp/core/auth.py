"""Bearer-token auth for `/mcp`: static `PRINCIPAL=TOKEN` pairs, and legacy MCP sessions bound to their principal.

`BearerAuth` is a pure ASGI middleware: without a valid token a request to the guarded path gets 401; with one, the
principal is put into the ASGI scope under `PRINCIPAL_SCOPE_KEY`. A session id opened by one principal answers 404
to every other principal, exactly like an unknown session, before the MCP SDK sees the request. With sign-in on, an
`Authenticate` hook (`webapp.auth`'s resource server) decides each request in place of the token table.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["PRINCIPAL_SCOPE_KEY", "Admission", "Authenticate", "BearerAuth", "SessionOwners", "TokenTable", "respond"]

PRINCIPAL_SCOPE_KEY = "webapp.principal"
"""ASGI scope key holding the authenticated principal (a str) on requests that passed `BearerAuth`."""

log = logging.getLogger(__name__)
_SESSION_HEADER = b"mcp-session-id"
_AUTH_HEADER = b"authorization"
_NOT_FOUND = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}}'


@dataclass(frozen=True, slots=True)
class Admission:
    """A request let through by an `Authenticate` hook: who makes it, what its legacy session is bound to, and the
    `receive` to read its body with (the hook may have read it already)."""

    principal: str
    owner: str
    receive: Receive


Authenticate = Callable[[Scope, Receive, Send, "bytes | None"], Awaitable["Admission | None"]]
"""Decides a request to the guarded path from its bearer token (None: no Authorization header); answers a refused
request itself and returns None (`webapp.auth`'s resource server)."""


class TokenTable:
    """Bearer token → principal, looked up in constant time with respect to the tokens' contents."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        """`tokens` maps each token to the principal it names (`Settings.tokens`)."""
        for token, principal in tokens.items():
            if not token or not principal:
                raise ValueError("a bearer token and its principal must both be non-empty; fix --token")
        self._entries = [(token.encode(), principal) for token, principal in tokens.items()]

    def __bool__(self) -> bool:
        return bool(self._entries)

    def principal(self, presented: bytes) -> str | None:
        """The principal named by `presented`, or None. Compares against every token, whatever matches."""
        found: str | None = None
        for token, principal in self._entries:
            if hmac.compare_digest(token, presented):
                found = principal
        return found


@dataclass(slots=True)
class _Owner:
    principal: str
    last_seen: float
    in_flight: int = 0


class SessionOwners:
    """Which principal opened each legacy MCP session; idle entries are dropped after `idle_timeout` seconds."""

    def __init__(self, idle_timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._idle_timeout = idle_timeout
        self._clock = clock
        self._owners: dict[str, _Owner] = {}

    def __len__(self) -> int:
        return len(self._owners)

    def opened(self, session_id: str, principal: str) -> None:
        self._prune()
        self._owners[session_id] = _Owner(principal, self._clock())

    def owner(self, session_id: str) -> str | None:
        entry = self._owners.get(session_id)
        return entry.principal if entry is not None else None

    def enter(self, session_id: str) -> None:
        entry = self._owners.get(session_id)
        if entry is not None:
            entry.in_flight += 1
            entry.last_seen = self._clock()

    def leave(self, session_id: str) -> None:
        entry = self._owners.get(session_id)
        if entry is not None:
            entry.in_flight = max(0, entry.in_flight - 1)
            entry.last_seen = self._clock()

    def forget(self, session_id: str) -> None:
        self._owners.pop(session_id, None)

    def _prune(self) -> None:
        # The SDK reaps a session idle for its timeout; keep ours a while longer so a live one is never dropped.
        horizon = self._clock() - 2 * self._idle_timeout
        stale = [sid for sid, e in self._owners.items() if e.in_flight == 0 and e.last_seen < horizon]
        for sid in stale:
            del self._owners[sid]


class BearerAuth:
    """ASGI middleware guarding `path` (exact, or below it) with bearer tokens; other paths pass untouched.

    With an empty token table and no `authenticate` hook auth is off: requests pass and carry no principal. Tokens
    are read only from the `Authorization` header; the hook, when given, decides in place of the table.
    """

    def __init__(
        self,
        app: ASGIApp,
        tokens: TokenTable | Mapping[str, str],
        *,
        path: str = "/mcp",
        session_idle_timeout: float = 1800.0,
        clock: Callable[[], float] = time.monotonic,
        authenticate: Authenticate | None = None,
    ) -> None:
        self.app = app
        self.authenticate = authenticate
        self.tokens = tokens if isinstance(tokens, TokenTable) else TokenTable(tokens)
        self.path = path.rstrip("/")
        self.sessions = SessionOwners(session_idle_timeout, clock)

    def guards(self, path: str) -> bool:
        return path == self.path or path.startswith(self.path + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        scope.pop(PRINCIPAL_SCOPE_KEY, None)
        if not (self.tokens or self.authenticate) or not self.guards(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        presented, session_id = _credentials(scope)
        if self.authenticate is not None:
            admission = await self.authenticate(scope, receive, send, presented)
            if admission is None:
                return
            principal, owner, receive = admission.principal, admission.owner, admission.receive
        else:
            principal = owner = self.tokens.principal(presented) if presented is not None else None
            if principal is None or owner is None:
                await _unauthorized(scope, receive, send, invalid=presented is not None)
                return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        if session_id is None:
            await self.app(scope, receive, self._recording_opened(send, owner))
        elif self.sessions.owner(session_id) != owner:
            # Unknown to us (never opened through this middleware) or opened by someone else: not found.
            log.warning("refused a request for a session not opened by principal %r", principal)
            await _not_found(scope, receive, send)
        else:
            await self._in_session(scope, receive, send, session_id)

    async def _in_session(self, scope: Scope, receive: Receive, send: Send, session_id: str) -> None:
        statuses: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                statuses.append(message["status"])
            await send(message)

        self.sessions.enter(session_id)
        try:
            await self.app(scope, receive, watch)
        finally:
            self.sessions.leave(session_id)
        status = statuses[0] if statuses else None
        if status == 404 or (scope.get("method") == "DELETE" and status is not None and status < 300):
            self.sessions.forget(session_id)

    def _recording_opened(self, send: Send, owner: str) -> Send:
        async def sender(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers", ()):
                    if bytes(name).lower() == _SESSION_HEADER:
                        self.sessions.opened(bytes(value).decode("latin-1"), owner)
            await send(message)

        return sender


def _credentials(scope: Scope) -> tuple[bytes | None, str | None]:
    token: bytes | None = None
    session_id: str | None = None
    for name, value in scope.get("headers", ()):
        if name == _AUTH_HEADER:
            scheme, _, rest = value.partition(b" ")
            token = rest.strip() if scheme.lower() == b"bearer" and rest.strip() else b""
        elif name == _SESSION_HEADER:
            session_id = value.decode("latin-1")
    return token, session_id


async def _unauthorized(scope: Scope, receive: Receive, send: Send, *, invalid: bool) -> None:
    challenge = b'Bearer error="invalid_token"' if invalid else b"Bearer"
    body = (
        b'{"error":"invalid_token","error_description":"The bearer token is not valid for this server."}'
        if invalid
        else b'{"error":"unauthorized","error_description":"Send an Authorization: Bearer <token> header."}'
    )
    await respond(scope, receive, send, 401, body, [(b"www-authenticate", challenge)])


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await respond(scope, receive, send, 404, _NOT_FOUND, [])


async def respond(
    scope: Scope, receive: Receive, send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]
) -> None:
    """Answer a refused request with a JSON `body` (a websocket is closed with 1008)."""
    if scope["type"] == "websocket":
        if (await receive())["type"] == "websocket.connect":
            await send({"type": "websocket.close", "code": 1008, "reason": ""})
        return
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
