"""A throwaway Redis server for the tests: Debian's redis-server on a free loopback port, without persistence;
`stop()` and `start()` again on the same port make an outage and a recovery."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RedisServer", "free_port", "start_redis"]

_START_TIMEOUT = 10.0
_READY = b"Ready to accept connections"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RedisServer:
    """One redis-server on `port`: `options` added to its command line (a Cluster node's, a replica's), `command`
    instead of the plain server's (a Sentinel's), `tls` to serve TLS only on the port."""

    folder: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    options: tuple[str, ...] = ()
    command: tuple[str, ...] = ("redis-server",)
    tls: bool = False
    ready: bytes = _READY  # what its log says once it serves (a Sentinel says it watches its master)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and return once it accepts connections (it says so on its log)."""
        ports = ("--port", "0", "--tls-port", str(self.port)) if self.tls else ("--port", str(self.port))
        sentinel = "--sentinel" in self.command  # it persists nothing but its own rewritten configuration
        storage = () if sentinel else ("--save", "", "--appendonly", "no")
        command = [*self.command, "--bind", "127.0.0.1", *ports, *storage]
        process = subprocess.Popen([*command, "--dir", str(self.folder), *self.options], stdout=subprocess.PIPE)
        self.process = process
        assert process.stdout is not None
        deadline, seen = time.monotonic() + _START_TIMEOUT, b""
        while self.ready not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or process.poll() is not None:
                self.stop()
                raise RuntimeError(f"redis-server did not start:\n{seen.decode(errors='replace')}")
            if select.select([process.stdout], [], [], left)[0]:
                seen += os.read(process.stdout.fileno(), 4096)
        threading.Thread(target=process.stdout.read, daemon=True).start()  # its later log lines must not fill the pipe

    def flush(self) -> None:
        """Remove every key (a test starts with an empty Redis)."""
        subprocess.run(["redis-cli", "-p", str(self.port), "FLUSHALL"], check=True, capture_output=True, timeout=10)

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.terminate()
                self.process.wait(_START_TIMEOUT)
            if self.process.stdout is not None:
                self.process.stdout.close()
        self.process = None

    @contextlib.contextmanager
    def frozen(self) -> Generator[None]:
        """Redis stops answering (SIGSTOP) and keeps its connections open, until the block ends."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.process.send_signal(signal.SIGCONT)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_redis() -> RedisServer:
    server = RedisServer(Path(tempfile.mkdtemp(prefix="webapp-redis-", dir="/tmp")), free_port())
    server.start()
    return server
