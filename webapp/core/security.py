"""Host and Origin checks for every HTTP and websocket route (pages, static files, NiceGUI's socket, `/mcp`).

`HostOriginGuard` is a pure ASGI middleware that wraps the whole app: a request with a missing or foreign `Host`,
or with a present `Origin` that is not allowed, is answered here and reaches nothing behind it (a foreign `Origin`
only where a `NullOriginRule` grants it: the requests of a view page shown in an MCP Apps host).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HostOriginGuard", "HostPolicy", "NullOriginGrant", "NullOriginRule", "Refusal", "normalize_origin"]

log = logging.getLogger(__name__)
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_REFERRER_POLICY = (b"referrer-policy", b"no-referrer")
_SHOWN = 80  # characters of a refused header value that reach the log
_SEVERAL = "(several)"  # what several Origin headers count as: never legitimate, never `null`
_PREFLIGHT_HEADERS = b"nicegui-check"  # the one header NiceGUI's reconnect check sends

NullOriginGrant = Literal["cors", "pass", "frame"]
"""`cors`: serve it as to any origin (`Access-Control-Allow-Origin: *`, no credentials, preflight answered);
`pass`: let it through unchanged (NiceGUI's socket answers CORS itself); `frame` (http only): serve it with no CORS
grant at all, any the app sent removed (a page a frame navigates to: its document runs, no script reads it)."""
NullOriginRule = Callable[[Scope], Awaitable[NullOriginGrant | None]]
"""Whether a request with a valid Host and a foreign Origin may pass, and how: `null` (an opaque-origin frame) or a
host sandbox's origin (a page booted directly into a host's frame, apps.md §13). Async: a view's key may be read
from the database."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is refused: the HTTP status and a short text (it never echoes the request)."""

    status: int
    reason: str


MISSING_HOST = Refusal(400, "Missing Host header")
FOREIGN_HOST = Refusal(421, "Invalid Host header")
FOREIGN_ORIGIN = Refusal(403, "Invalid Origin header")


def normalize_origin(origin: str) -> str | None:
    """`scheme://host:port` in lower case with the port spelled out, or None when `origin` is not such an origin.

    `null`, paths, user info, queries and unknown schemes are not origins.
    """
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or _DEFAULT_PORTS[scheme]}"


@dataclass(frozen=True, slots=True)
class HostPolicy:
    """The accepted `Host` values (`name:port`, exact, case-insensitive) and `Origin`s (exact `scheme://host:port`)."""

    hosts: frozenset[str]
    origins: frozenset[str]

    @classmethod
    def of(cls, hosts: Iterable[str], origins: Iterable[str]) -> HostPolicy:
        """A policy from setting values; an allowed origin that is not `scheme://host[:port]` raises ValueError."""
        normalized: set[str] = set()
        for origin in origins:
            value = normalize_origin(origin)
            if value is None:
                raise ValueError(f"an allowed origin must look like 'http://host:port', got {origin!r}")
            normalized.add(value)
        return cls(
            hosts=frozenset(host.strip().lower() for host in hosts if host.strip()), origins=frozenset(normalized)
        )

    def check(self, host: str | None, origin: str | None) -> Refusal | None:
        """None when a request with these header values may pass, else why not. A missing Origin passes."""
        if not host:
            return MISSING_HOST
        if host.strip().lower() not in self.hosts:
            return FOREIGN_HOST
        if origin is not None:
            value = normalize_origin(origin)
            if value is None or value not in self.origins:
                return FOREIGN_ORIGIN
        return None


PolicySource = HostPolicy | Callable[[], HostPolicy]
"""A fixed policy, or a function returning the current one (the port may be known only once the socket is bound)."""


class HostOriginGuard:
    """ASGI middleware: refuses foreign or missing Host and foreign Origin on http and websocket scopes.

    Refused http requests get 400 (no Host), 421 (foreign Host) or 403 (foreign Origin); refused websockets are closed
    before the handshake completes (the server answers 403). Every http response gets `Referrer-Policy: no-referrer`,
    so view URLs with attach keys never leak through `Referer`. Lifespan scopes pass through.
    """

    def __init__(self, app: ASGIApp, policy: PolicySource, null_origin: NullOriginRule | None = None) -> None:
        self.app = app
        self._policy = policy
        self._null_origin = null_origin

    @property
    def policy(self) -> HostPolicy:
        return self._policy if isinstance(self._policy, HostPolicy) else self._policy()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host, origin = _host_and_origin(scope)
        refusal = self.policy.check(host, origin)
        grant = None
        if refusal is FOREIGN_ORIGIN and origin not in (None, _SEVERAL) and self._null_origin is not None:
            grant = await self._null_origin(scope)
            if grant == "frame" and kind != "http":
                grant = None  # a socket is never a frame's navigation
        if grant == "cors":
            await self._cors(scope, receive, send)
            return
        if refusal is not None and grant is None:
            log.warning(
                "refused %s %s: %s (Host %s, Origin %s)",
                kind,
                _shown(scope.get("path", "")),
                refusal.reason,
                _shown(host),
                _shown(origin),
            )
            if kind == "http":
                await _refuse_http(refusal, send)
            else:
                await _refuse_websocket(receive, send)
            return
        if kind == "http":
            await self.app(scope, receive, _with_headers(send, cors="none" if grant == "frame" else None))
        else:
            await self.app(scope, receive, send)

    async def _cors(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") == "OPTIONS":
            headers = [_REFERRER_POLICY, *_ANY_ORIGIN, (b"access-control-allow-methods", b"GET")]
            headers.append((b"access-control-allow-headers", _PREFLIGHT_HEADERS))
            await send({"type": "http.response.start", "status": 204, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
        elif scope["type"] == "http":
            await self.app(scope, receive, _with_headers(send, cors="any"))
        else:
            await self.app(scope, receive, send)


def _host_and_origin(scope: Scope) -> tuple[str | None, str | None]:
    host: str | None = None
    origin: str | None = None
    hosts = 0
    for name, value in scope.get("headers", ()):
        if name == b"host":
            hosts += 1
            host = value.decode("latin-1")
        elif name == b"origin":
            # Several Origin headers are never legitimate: keep a value that no policy allows.
            origin = value.decode("latin-1") if origin is None else _SEVERAL
    if hosts > 1:
        host = None
    return host, origin


def _shown(value: str | None) -> str:
    if value is None:
        return "-"
    text = value if len(value) <= _SHOWN else value[:_SHOWN] + "…"
    return repr(text.split("?", 1)[0])


async def _refuse_http(refusal: Refusal, send: Send) -> None:
    body = refusal.reason.encode()
    headers: list[tuple[bytes, bytes]] = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        _REFERRER_POLICY,
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse_websocket(receive: Receive, send: Send) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close", "code": 1008, "reason": ""})


_ANY_ORIGIN = [(b"access-control-allow-origin", b"*"), (b"vary", b"Origin")]
_GRANTS = frozenset({b"access-control-allow-origin", b"access-control-allow-credentials"})
_CORS_NAMES = _GRANTS | {b"vary"}


def _with_headers(send: Send, *, cors: Literal["any", "none"] | None = None) -> Send:
    """`Referrer-Policy: no-referrer` on every response; with `cors="any"`, also `Access-Control-Allow-Origin: *` in
    place of whatever CORS headers the app sent (never credentials); with `cors="none"`, no CORS grant the app sent."""

    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers: list[Any] = list(message.get("headers", ()))
            if cors is not None:
                dropped = _CORS_NAMES if cors == "any" else _GRANTS
                headers = [(name, value) for name, value in headers if bytes(name).lower() not in dropped]
            if cors == "any":
                headers += _ANY_ORIGIN
            if not any(bytes(name).lower() == _REFERRER_POLICY[0] for name, _ in headers):
                headers.append(_REFERRER_POLICY)
            message = {**message, "headers": headers}
        await send(message)

    return sender
