"""A TCP proxy on loopback whose network faults a test controls: put it between a worker and Redis (or Postgres) and
make the faults operators meet every week.

- `cut_after(marker)`: the next client chunk that holds `marker` (a command's name, e.g. `b"SPUBLISH"`) is forwarded,
  then its connection is reset before the server's reply comes back: the command ran, its sender never learns it.
- `duplicate(marker)`: the next chunk that holds `marker` reaches the server twice (the copy over a connection of its
  own, whose reply is read and dropped, so the client's protocol stays in step).
- `black_hole()`: every connection open now stops carrying bytes either way, and is never closed (a NAT or balancer
  that dropped the flow without a FIN); new connections pass. `black_hole(new=True)` holds new ones too: a partition.
- `delay(seconds)`: every chunk waits that long before it is forwarded.
- `heal()`: no fault from now on (held connections stay held: their peers must notice by themselves).

It runs on an event loop of its own, in a thread, so sync tests, async tests and server subprocesses can use it alike;
a userspace proxy answers TCP keepalive probes itself, so keepalive is checked by its socket options, not here.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["FaultProxy", "Link"]

T = TypeVar("T")
_CHUNK = 65536
_START_TIMEOUT = 5.0


@dataclass(eq=False)
class Link:
    """One client connection through the proxy and its own connection to the server."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    held: asyncio.Event = field(default_factory=asyncio.Event)  # set: no byte crosses any more, either way


class FaultProxy:
    """Listens on `port` (a free one) and forwards to `target_port`, both on 127.0.0.1; use as a context manager."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"fault-proxy-{self.port}", daemon=True)
        self._server: asyncio.Server | None = None
        self._links: set[Link] = set()
        self._cut: bytes | None = None
        self._duplicate: bytes | None = None
        self._delay = 0.0
        self._hold_new = False
        self.cuts = 0
        """Connections reset by `cut_after` so far."""
        self.duplicates = 0
        """Chunks sent twice by `duplicate` so far."""

    @property
    def url(self) -> str:
        """A `redis://` URL through the proxy (for Redis)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        self._call(self._start())
        return self

    def __exit__(self, *_: object) -> None:
        self._call(self._stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(_START_TIMEOUT)
        self._loop.close()

    # -- the faults (from any thread) ----------------------------------------------------------------------------

    def cut_after(self, marker: bytes) -> None:
        self._set(lambda: setattr(self, "_cut", marker))

    def duplicate(self, marker: bytes) -> None:
        self._set(lambda: setattr(self, "_duplicate", marker))

    def delay(self, seconds: float) -> None:
        self._set(lambda: setattr(self, "_delay", seconds))

    def black_hole(self, *, new: bool = False) -> None:
        """Hold every open connection (and with `new`, every later one too, until `heal`)."""

        def hold() -> None:
            self._hold_new = new
            for link in self._links:
                link.held.set()

        self._set(hold)

    def heal(self) -> None:
        def clear() -> None:
            self._cut = self._duplicate = None
            self._delay, self._hold_new = 0.0, False

        self._set(clear)

    def reset(self) -> None:
        """Reset (close) every open connection, held ones too."""
        self._set(lambda: [_abort(link) for link in tuple(self._links)])

    @property
    def open_links(self) -> int:
        return self._call(self._count())

    # -- the proxy ------------------------------------------------------------------------------------------------

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(_START_TIMEOUT)

    def _set(self, change: Callable[[], object]) -> None:
        async def run() -> None:
            change()

        self._call(run())

    async def _count(self) -> int:
        return len(self._links)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._accept, sock=self._listener)

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in tuple(self._links):
            _abort(link)
        pumps = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in pumps:  # held ones wait forever: they end here
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)

    async def _accept(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        try:
            server_in, server_out = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_out.transport.abort()
            return
        link = Link(client_out, server_out)
        if self._hold_new:
            link.held.set()
        self._links.add(link)
        try:
            await asyncio.gather(self._pump(link, client_in, server_out, True), self._pump(link, server_in, client_out))
        except asyncio.CancelledError:  # the proxy stops: a held link ends here (asyncio would log the cancel)
            pass
        finally:
            self._links.discard(link)
            _abort(link)

    async def _pump(
        self, link: Link, source: asyncio.StreamReader, sink: asyncio.StreamWriter, upstream: bool = False
    ) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await source.read(_CHUNK):
                if link.held.is_set():
                    await _forever()
                if self._delay:
                    await asyncio.sleep(self._delay)
                if link.held.is_set():
                    await _forever()
                sink.write(chunk)
                await sink.drain()
                if upstream:
                    await self._after_upstream(link, chunk)
        _abort(link)

    async def _after_upstream(self, link: Link, chunk: bytes) -> None:
        if self._duplicate is not None and self._duplicate in chunk:
            self._duplicate = None
            self.duplicates += 1
            await _send_aside(self.target_port, chunk)
        if self._cut is not None and self._cut in chunk:
            self._cut = None
            self.cuts += 1
            _abort(link)  # before the reply: the server ran it, the client sees a reset


async def _send_aside(port: int, chunk: bytes) -> None:
    """`chunk` to the server over a connection of its own; its reply read and dropped."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(chunk)
        await writer.drain()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):
                await reader.read(_CHUNK)
    finally:
        writer.transport.abort()


async def _forever() -> None:
    """A held connection's pump: it carries nothing more until the link is aborted (which cancels nothing here: the
    peers keep their sockets, as a dropped flow leaves them)."""
    await asyncio.Event().wait()


def _abort(link: Link) -> None:
    for writer in (link.client, link.server):
        with contextlib.suppress(Exception):
            writer.transport.abort()
