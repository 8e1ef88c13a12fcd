"""The operator's routes (apps.md §16): `/healthz` and `/readyz` answered ahead of the Host/Origin guard and of sign-in,
whatever the Host (a kubelet and a balancer's check use the pod's address); `/metrics` behind the guard but ahead of
sign-in; and the separate `--metrics-port` that serves all three alone, whatever the Host (a scraper's port).

`/metrics` is served on the serving port when it listens on loopback or with `--metrics`, and always on the metrics
port; the probes reveal nothing but their JSON state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from http import HTTPStatus
from typing import Protocol
from urllib.parse import urlsplit

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

from webapp.core.settings import Settings, SettingsError, is_loopback
from webapp.server.metrics import CONTENT_TYPE, Metrics
from webapp.server.readiness import Readiness

__all__ = [
    "HEALTH_PATH",
    "METRICS_PATH",
    "PROBE_PATHS",
    "READY_PATH",
    "OpsPort",
    "OpsRoutes",
    "OpsSource",
    "answer",
    "metrics_on_serving_port",
    "reserve_port",
]

log = logging.getLogger(__name__)
HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
PROBE_PATHS = frozenset({HEALTH_PATH, READY_PATH})
"""The routes that answer any Host on the serving port."""
_JSON = b"application/json"
_HEAD_LIMIT = 8192  # bytes of a request head on the metrics port
_READ_TIMEOUT = 5.0  # seconds a client of the metrics port may take to send its request
Answer = tuple[int, bytes, bytes]
"""Status, content type and body."""
_NOT_FOUND: Answer = (404, b"text/plain; charset=utf-8", b"This port serves /metrics, /healthz and /readyz only.\n")


class OpsSource(Protocol):
    """What the routes need of the server (`webapp.WebApp`)."""

    settings: Settings
    readiness: Readiness
    metrics: Metrics


def metrics_on_serving_port(settings: Settings) -> bool:
    return settings.metrics or is_loopback(settings.host)


async def answer(source: OpsSource, path: str, *, metrics: bool) -> Answer | None:
    """The answer to a GET of `path`, or None when it is not an operator's route (here)."""
    if path == HEALTH_PATH:  # liveness: this loop answers; nothing else is asked
        return 200, _JSON, b'{"status":"ok"}'
    if path == READY_PATH:
        report = await source.readiness.report()
        return (200 if report.ready else 503), _JSON, orjson.dumps(report.body())
    if path == METRICS_PATH and metrics:
        await source.readiness.report()  # the database's and the readiness's gauges are as fresh as a probe's
        return 200, CONTENT_TYPE.encode(), source.metrics.exposition()
    return None


def _headers(content_type: bytes, length: int) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", content_type),
        (b"content-length", str(length).encode()),
        (b"cache-control", b"no-store"),
    ]


class OpsRoutes:
    """ASGI middleware: answers GET and HEAD of the operator's routes among `paths`, passes the rest on. The probes'
    instance goes outside every other middleware (any Host); the one of `/metrics` inside the Host/Origin guard and
    outside sign-in."""

    def __init__(self, app: ASGIApp, source: Callable[[], OpsSource], paths: frozenset[str]) -> None:
        self.app = app
        self._source = source
        self._paths = paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") in self._paths and scope.get("method") in ("GET", "HEAD"):
            current = self._source()
            served = await answer(current, scope["path"], metrics=metrics_on_serving_port(current.settings))
            if served is not None:
                status, content_type, body = served
                headers = _headers(content_type, len(body))
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})
                return
        await self.app(scope, receive, send)


class OpsPort:
    """`--metrics-port`: the operator's routes alone on a port of their own, served from the event loop (HTTP/1.1,
    one request per connection)."""

    def __init__(self, listening: socket.socket, source: OpsSource) -> None:
        self._socket = listening
        self._source = source
        self._server: asyncio.Server | None = None

    @classmethod
    def bind(cls, host: str, port: int, source: OpsSource) -> OpsPort:
        """Bind `host:port` now (0: any free port), so the port is known before the server starts."""
        listening = reserve_port(host, port, option="--metrics-port")
        try:
            listening.listen(64)
        except OSError as error:
            listening.close()
            raise SettingsError(
                f"cannot listen on {host}:{port} ({error.strerror}); pick another --metrics-port"
            ) from None
        listening.setblocking(False)
        return cls(listening, source)

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    def url(self, path: str) -> str:
        host = str(self._socket.getsockname()[0])
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}{path}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, sock=self._socket, limit=_HEAD_LIMIT)

    async def stop(self) -> None:
        """Stop listening (after the drain: a stopping worker's probes say so until then)."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await self._server.wait_closed()
            self._server = None
        self._socket.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_READ_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            served = None
            if method in ("GET", "HEAD"):
                served = await answer(self._source, urlsplit(target).path, metrics=True)
            status, content_type, body = served or _NOT_FOUND
            lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}".encode()]
            lines += [name + b": " + value for name, value in _headers(content_type, len(body))]
            writer.write(b"\r\n".join([*lines, b"connection: close", b"", b""]) + (b"" if method == "HEAD" else body))
            await writer.drain()
        except (TimeoutError, ValueError, ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            log.debug("a metrics-port request was dropped", exc_info=True)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()


def reserve_port(host: str, port: int, *, option: str = "--port") -> socket.socket:
    """Bind (without listening) to `host:port` with SO_REUSEADDR: port 0 becomes a real free port that no other
    process can take before uvicorn listens on it. Keep the returned socket open while serving."""
    address = "127.0.0.1" if host in ("localhost", "") else host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    reservation = socket.socket(family, socket.SOCK_STREAM)
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        reservation.bind((address, port))
    except OSError as error:
        reservation.close()
        raise SettingsError(f"cannot listen on {host}:{port} ({error.strerror}); pick another {option}, or 0") from None
    return reservation
