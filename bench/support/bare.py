"""The floors under the scale model's figures: what the same frames cost with no product code on either side.

`publishing` runs a bare publisher in a process of its own: one SPUBLISH of the same bytes per frame, on a clock,
from redis-py's blocking client. `BareReaders` are the least a Python worker can do with a frame: an asyncio protocol
per subscription, woken by the frame, parsed by hiredis (the parser redis-py uses), counted, nothing else. Redis'
CPU per delivery with the bare publisher is the floor of a change's cost to Redis; this process' CPU per frame the
bare readers receive is the floor of a worker's cost per foreign frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Generator

import hiredis

__all__ = ["BareReaders", "publishing"]

_PUBLISHER = """
import sys, time, redis
port, channel, rate, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
data = sys.stdin.buffer.read()
client, started, sent = redis.Redis(port=port), time.monotonic(), 0
while (elapsed := time.monotonic() - started) < seconds:
    while sent < elapsed * rate:
        client.spublish(channel, data)
        sent += 1
    time.sleep(0.005)  # the clock of the scale model's own load (`bench.scale.drive`)
"""


@contextlib.contextmanager
def publishing(port: int, channel: str, data: bytes, rate: float, seconds: float) -> Generator[subprocess.Popen[bytes]]:
    """A bare publisher of `data` on `channel`, `rate` times a second for `seconds` (wait for the process to end)."""
    command = [sys.executable, "-c", _PUBLISHER, str(port), channel, str(rate), str(seconds)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE)
    assert process.stdin is not None
    process.stdin.write(data)
    process.stdin.close()
    try:
        yield process
    finally:
        process.kill()
        process.wait()


class _Reader(asyncio.Protocol):
    def __init__(self) -> None:
        self.frames = 0
        self._parser = hiredis.Reader()

    def data_received(self, data: bytes) -> None:
        self._parser.feed(data)
        while (reply := self._parser.gets()) is not False:
            if isinstance(reply, list) and reply[:1] == [b"smessage"]:
                self.frames += 1


class BareReaders:
    """`count` bare subscriptions of `channel` on this process' loop (`open()`, then `close()`)."""

    def __init__(self, port: int, channel: str, count: int) -> None:
        self._port, self._channel, self._count = port, channel, count
        self._connections: list[tuple[asyncio.BaseTransport, _Reader]] = []

    @property
    def frames(self) -> int:
        """The frames they received between them."""
        return sum(reader.frames for _, reader in self._connections)

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        command = hiredis.pack_command(("SSUBSCRIBE", self._channel))  # pyright: ignore[reportArgumentType]  # its stub: a 1-tuple
        for _ in range(self._count):
            transport, reader = await loop.create_connection(_Reader, "127.0.0.1", self._port)
            transport.write(command)
            self._connections.append((transport, reader))
        await asyncio.sleep(0.2)  # subscribed

    def close(self) -> None:
        for transport, _ in self._connections:
            transport.close()
        self._connections.clear()
