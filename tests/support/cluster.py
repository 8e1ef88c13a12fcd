"""Several workers for the tests: `webapp serve --redis-url … --worker-id …` processes on their own ports, sharing
one database and the session's Redis; helpers to point a view URL at a worker, to count Redis commands and to count
the messages published on the workers' sharded channels (inboxes: bridge calls; `wv:{events}`: app events, the call
log's apart)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Generator
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import redis.asyncio as aioredis

from tests.support.e2e import RunningServer, run_server
from tests.support.fuzz_app import counter_app
from webapp.bridge.dispatch import Bridge
from webapp.bridge.store import ViewRow, ViewStore
from webapp.calllog import TOPIC as CALLS_TOPIC
from webapp.cluster import EVENTS_CHANNEL, heartbeat_key, install_cluster
from webapp.server import WebApp

__all__ = [
    "Channels",
    "command_counts",
    "eventually",
    "held_elsewhere",
    "on_worker",
    "per_beats",
    "start_worker",
    "two_workers",
    "watch_channels",
    "worker_app",
]


@contextlib.contextmanager
def two_workers(
    redis_url: str, *args: str, db: Path | str, app: str, cwd: Path | None = None
) -> Generator[tuple[RunningServer, RunningServer]]:
    """Workers w1 and w2 of `app` on one database (a database URL needs `cwd`, a folder to run in) and Redis, until the
    block ends."""
    argv = ("--redis-url", redis_url, *args)
    with (
        run_server(*argv, "--worker-id", "w1", app=app, db=db, cwd=cwd) as one,
        run_server(*argv, "--worker-id", "w2", app=app, db=db, cwd=cwd) as two,
    ):
        yield one, two


async def start_worker(
    stack: contextlib.ExitStack, worker: str, redis_url: str, *args: str, db: Path, app: str
) -> RunningServer:
    """Start one worker (without blocking the event loop the browser runs on); it stops when `stack` closes."""
    argv = ("--redis-url", redis_url, "--worker-id", worker, *args)
    return await asyncio.to_thread(stack.enter_context, run_server(*argv, app=app, db=db))


async def eventually(check: Callable[[], bool], timeout: float = 10.0, what: str = "the condition") -> float:
    """Look at `check` (another process's state: a database row, a Redis key) every 50 ms until it holds; the
    seconds it took. Fails after `timeout`."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"{what} did not come within {timeout} s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


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


class Channels:
    """The messages published on the workers' channels (`wv:*`) since the watch began, counted by channel kind
    ("inbox" for any worker's inbox, "ping" for a look at whether an inbox has a reader, "ack" for an owner's word
    that it got a call, "calls" for a frame of
    call records on the events channel: sent only while a viewer follows the call log); `settled()` waits until what
    was published before it was counted."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.counts: Counter[str] = Counter()
        self.commands: list[str] = []
        """Every command Redis ran meanwhile, as MONITOR shows it."""
        self._changed = asyncio.Event()
        self._client = client

    def saw(self, command: str) -> None:
        self.commands.append(command)
        name, _, rest = command.partition(" ")
        if name.lower() not in ("spublish", "publish") or not rest.startswith("wv:"):
            return
        channel, _, data = rest.partition(" ")
        kind = channel
        if channel.endswith(":inbox"):
            kind = "ping" if data == '{"kind":"ping"}' else "ack" if data.startswith('{"kind":"ack"') else "inbox"
        elif channel == EVENTS_CHANNEL and _topics(data) == [CALLS_TOPIC]:
            kind = "calls"
        self.counts[kind] += 1
        self._changed.set()

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    async def settled(self) -> None:
        """Until everything published before this call was counted (a marker is published after it and seen: MONITOR
        shows the commands in the order Redis ran them); the marker itself is not counted."""
        await self._client.spublish(_MARKER, b"")
        await self.wait(_MARKER, 1)
        del self.counts[_MARKER]

    async def wait(self, kind: str, count: int, timeout: float = 10) -> None:
        """Until `count` messages went out on `kind` (a channel, "inbox" for any worker's inbox, or "calls")."""
        async with asyncio.timeout(timeout):
            while self.counts[kind] < count:
                self._changed.clear()
                await self._changed.wait()


_MARKER = "wv:{test}:settled"


def _topics(data: str) -> list[str]:
    """The topics of an events frame as MONITOR shows it: its header line is plain JSON, its newline escaped."""
    with contextlib.suppress(orjson.JSONDecodeError, IndexError, TypeError):
        return list(orjson.loads(data.partition("\\n")[0])[1])
    return []


@contextlib.asynccontextmanager
async def watch_channels(redis_url: str) -> AsyncGenerator[Channels]:
    """Count every message published on `wv:*` (every SPUBLISH a worker makes goes to one of these channels), as
    MONITOR sees them: a subscriber would see none of the sharded ones, which a classic subscription never gets."""
    client = aioredis.Redis.from_url(redis_url)
    channels = Channels(client)
    monitor = client.monitor()
    await monitor.__aenter__()

    async def read() -> None:
        async for entry in monitor.listen():
            channels.saw(str(entry["command"]))

    reader = asyncio.create_task(read())
    try:
        yield channels
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await monitor.__aexit__(None, None, None)
        await client.aclose()


def worker_app(webapp: WebApp) -> Bridge:
    """The counter app on one worker among several (as `webapp serve --redis-url` installs it), in process."""
    bridge = counter_app(webapp)
    assert install_cluster(webapp) is not None
    return bridge


async def held_elsewhere(db: Path, views: int) -> None:
    """`views` live views held by worker w2 (so w1 looks at w2's heartbeat every second)."""
    store = ViewStore(db)
    await store.open()
    try:
        for n in range(views):
            store.save_soon(
                ViewRow(
                    handle=f"handle-{n}",
                    attach_key=f"key-{n}",
                    app="counter",
                    principal="someone",
                    session_id=f"session-{n}",
                    bound=True,
                    state="live",
                    input='{"title": "x"}',
                    data="{}",
                    created=float(n),
                    bound_at=float(n),
                    changed_at=1e12,  # nothing to expire while the test runs
                    worker="w2",
                )
            )
    finally:
        await store.close()  # after the writes


async def per_beats(redis_url: str, worker: str, beats: int) -> Counter[str]:
    """The commands Redis ran (MONITOR) between one heartbeat of `worker` and the `beats`th after it, by name."""
    client = aioredis.Redis.from_url(redis_url)
    seen: Counter[str] = Counter()
    beat = f"SET {heartbeat_key(worker)} "
    try:
        async with client.monitor() as monitor, asyncio.timeout(beats + 5):
            seen_beats = 0
            async for entry in monitor.listen():
                command = str(entry["command"])
                if command.startswith(beat):
                    seen_beats += 1
                    if seen_beats == beats + 1:
                        break
                if seen_beats:
                    seen[command.split(" ", 1)[0].upper()] += 1
    finally:
        await client.aclose()
    return seen
