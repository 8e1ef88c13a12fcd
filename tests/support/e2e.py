"""End-to-end helpers: run `python -m webapp` in a subprocess on a free port, talk to it over MCP and HTTP.

`run_server()` waits (bounded) until uvicorn listens, yields a `RunningServer` (base URL, captured output) and
stops the process cleanly. `mcp_client()` makes an official MCP client for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncGenerator, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

__all__ = [
    "REPO",
    "STATE_KEY",
    "TEST_APP",
    "Checkout",
    "RunningServer",
    "child_env",
    "mcp_client",
    "mcp_client_with_token",
    "run_server",
    "stdio_parameters",
    "wait_http",
]

REPO = Path(__file__).resolve().parents[2]
TEST_APP = "tests.support.apps:build"
STATE_KEY = "test-request-state-key-of-32-bytes-or-more"
"""The `--request-state-key` every test worker with `--redis-url` shares (through the environment, which older
checkouts ignore)."""
_BANNER = re.compile(r'webapp serving on (http://[^\s"]+)')  # the banner's first line, or its JSON line's message
_LISTENING = "Uvicorn running on"


def child_env(extra: dict[str, str] | None = None, *, root: Path = REPO) -> dict[str, str]:
    """The environment for a server subprocess of the checkout `root`: ours without pytest's markers (pitfall P5),
    WEBAPP_* settings or OTEL_* variables (a test asks for traces itself)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "WEBAPP_", "NICEGUI_", "OTEL_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


@dataclass(frozen=True)
class Checkout:
    """The code a server subprocess runs: a checkout's root (on `PYTHONPATH`) and the Python with its packages."""

    root: Path = REPO
    python: Path = Path(sys.executable)


@dataclass
class RunningServer:
    process: subprocess.Popen[str]
    base_url: str = ""
    lines: list[str] = field(default_factory=lambda: [])
    streams: dict[str, list[str]] = field(default_factory=lambda: {})
    """The lines of each stream named when pumped (`stdout`, `stderr`)."""
    pumps: list[threading.Thread] = field(default_factory=lambda: [])
    _changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    @property
    def mcp_url(self) -> str:
        return self.base_url + "/mcp"

    @property
    def output(self) -> str:
        """Everything the process wrote so far (stdout and stderr, interleaved by arrival)."""
        with self._changed:
            return "\n".join(self.lines)

    def written(self, stream: str) -> list[str]:
        """What the process wrote so far on one stream (`stdout` or `stderr`)."""
        with self._changed:
            return list(self.streams.get(stream, []))

    def _pump(self, stream: Any, name: str) -> None:
        with self._changed:
            own = self.streams.setdefault(name, [])
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                own.append(self.lines[-1])
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def pump(self, stream: Any, name: str = "") -> None:
        """Collect `stream`'s lines into `lines` (and `streams[name]`) from a thread of their own (until EOF)."""
        thread = threading.Thread(target=self._pump, args=(stream, name), daemon=True)
        thread.start()
        self.pumps.append(thread)

    def wait_for_output(self, pattern: str | re.Pattern[str], timeout: float = 20.0) -> re.Match[str]:
        """The first output line matching `pattern`; raises if the process ends or `timeout` passes first."""
        regex = re.compile(pattern)
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    if match := regex.search(line):
                        return match
                seen = len(self.lines)
                if self.process.poll() is not None and seen == len(self.lines):
                    raise RuntimeError(
                        f"server exited ({self.process.returncode}) before {regex.pattern!r}:\n" + "\n".join(self.lines)
                    )
                if not self._changed.wait(timeout):
                    raise TimeoutError(f"no {regex.pattern!r} within {timeout} s:\n" + "\n".join(self.lines))

    def stop(self, timeout: float = 10.0) -> int:
        """Stop with SIGINT (uvicorn's graceful shutdown), kill after `timeout`; returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        for pump in self.pumps:  # they end at EOF, which follows the exit
            pump.join(timeout)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        return self.process.returncode


def _start(args: Sequence[str], env: dict[str, str] | None, cwd: Path, checkout: Checkout) -> RunningServer:
    process = subprocess.Popen(
        [str(checkout.python), "-m", "webapp", *args],
        cwd=cwd,
        env=child_env(env, root=checkout.root),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    running = RunningServer(process)
    running.pump(process.stdout, "stdout")
    running.pump(process.stderr, "stderr")
    return running


@contextlib.contextmanager
def run_server(
    *args: str,
    db: Path | str,
    app: str = TEST_APP,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 30.0,
    wait: bool = True,
    checkout: Checkout | None = None,
) -> Generator[RunningServer]:
    """Run `webapp serve --port 0 --app APP --db DB ARGS` in DB's folder (or `cwd`, which a database URL needs)
    until the block ends; `checkout`: another checkout's code and Python (a benchmark against an older commit).

    With `wait`, returns once uvicorn listens (`base_url` is set from the banner, text or JSON); else right after
    spawning (for tests of start-up failures: use `process.wait()` and `output`).
    """
    argv = ["serve", "--port", "0", "--app", app, "--log-level", "info", "--db", str(db)]
    if "--redis-url" in args:  # workers share the key of the request state (required with --redis-url)
        env = {"WEBAPP_REQUEST_STATE_KEY": STATE_KEY, **(env or {})}
    folder = cwd or (db.parent if isinstance(db, Path) else None)
    if folder is None:
        raise ValueError("a server on a database URL needs cwd=, a temporary folder to run in")
    running = _start([*argv, *args], env, folder, checkout or Checkout())
    try:
        if wait:
            running.base_url = running.wait_for_output(_BANNER, timeout).group(1)
            running.wait_for_output(_LISTENING, timeout)
        yield running
    finally:
        running.stop()


def mcp_client(server: RunningServer | str, *, mode: Literal["auto", "legacy"] = "auto", **kwargs: Any) -> Client:
    """An official MCP client for `server` (use with `async with`); `mode="legacy"` speaks 2025-11-25 sessions."""
    url = server if isinstance(server, str) else server.mcp_url
    return Client(url, mode=mode, **kwargs)


@contextlib.asynccontextmanager
async def mcp_client_with_token(
    server: RunningServer, token: str, *, mode: Literal["auto", "legacy"] = "auto", **kwargs: Any
) -> AsyncGenerator[Client]:
    """An official MCP client that sends `Authorization: Bearer {token}` (for servers started with `--token`)."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(server.mcp_url, http_client=http), mode=mode, **kwargs) as client,
    ):
        yield client


def stdio_parameters(
    *args: str, db: Path, app: str = TEST_APP, env: dict[str, str] | None = None
) -> StdioServerParameters:
    """Parameters for `Client(...)` / `stdio_client(...)`: `webapp serve --stdio --port 0 --app APP --db DB ARGS`,
    run in DB's folder."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "webapp", "serve", "--stdio", "--port", "0", "--app", app, "--db", str(db), *args],
        env=child_env(env),
        cwd=str(db.parent),
    )


async def wait_http(url: str, timeout: float = 20.0) -> httpx.Response:
    """GET `url` once the server accepts connections (retrying refused connections, bounded by `timeout`)."""
    async with asyncio.timeout(timeout), httpx.AsyncClient() as client:
        delay = 0.01
        while True:
            try:
                return await client.get(url)
            except httpx.ConnectError:
                await asyncio.sleep(delay)  # the port is not listening yet: back off briefly and retry
                delay = min(delay * 2, 0.2)
