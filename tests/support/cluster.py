"""Several workers for the tests: `webapp serve --redis-url … --worker-id …` processes on their own ports, sharing
one database and the session's Redis; helpers to point a view URL at a worker and to count Redis commands."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.e2e import RunningServer, run_server

__all__ = ["command_counts", "on_worker", "start_worker"]


async def start_worker(
    stack: contextlib.ExitStack, worker: str, redis_url: str, *args: str, db: Path, app: str
) -> RunningServer:
    """Start one worker (without blocking the event loop the browser runs on); it stops when `stack` closes."""
    argv = ("--redis-url", redis_url, "--worker-id", worker, *args)
    return await asyncio.to_thread(stack.enter_context, run_server(*argv, app=app, db=db))


def on_worker(url: str, worker: RunningServer) -> str:
    """`url` (a view link) on `worker`'s port: as a load balancer would send the tab there."""
    parts = urlsplit(url)
    return parts._replace(netloc=urlsplit(worker.base_url).netloc).geturl()


def command_counts(port: int) -> dict[str, int]:
    """How often Redis ran each command since it started (`INFO commandstats`)."""
    done = subprocess.run(
        ["redis-cli", "-p", str(port), "INFO", "commandstats"], check=True, capture_output=True, text=True, timeout=10
    )
    counts: dict[str, int] = {}
    for line in done.stdout.splitlines():
        if line.startswith("cmdstat_"):
            name, _, stats = line.partition(":")
            calls = dict(part.split("=", 1) for part in stats.split(","))
            counts[name.removeprefix("cmdstat_")] = int(calls["calls"])
    return counts
