"""A worker's background Redis traffic (apps.md §14.1): with views attached and another worker holding views, an idle
worker sends at most two commands a second — its heartbeat and one look at the other workers' — as many with 1,000
views as with 10, and never a script over its views' keys."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import redis.asyncio as aioredis

from tests.support.fuzz_app import counter_app
from tests.support.fuzz_server import in_process_server
from webapp.bridge import view_digest
from webapp.bridge.dispatch import Bridge
from webapp.bridge.store import ViewRow, ViewStore
from webapp.cluster import Node, heartbeat_key, install_cluster
from webapp.server import WebApp

BEATS = 3  # heartbeat intervals (one second each) counted per measurement


def worker_app(webapp: WebApp) -> Bridge:
    """The counter app on one worker among several (as `webapp serve --redis-url` installs it)."""
    bridge = counter_app(webapp)
    assert install_cluster(webapp) is not None
    return bridge


def held_elsewhere(db: Path, views: int) -> None:
    """`views` live views held by worker w2 (so w1 looks at w2's heartbeat every second)."""
    store = ViewStore(db)
    store.open()
    try:
        for n in range(views):
            store.save(
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
        store.close()


async def per_beats(redis_url: str, worker: str) -> Counter[str]:
    """The commands Redis ran (MONITOR) between one heartbeat of `worker` and the `BEATS`th after it, by name."""
    client = aioredis.Redis.from_url(redis_url)
    seen: Counter[str] = Counter()
    beat = f"SET {heartbeat_key(worker)} "
    try:
        async with client.monitor() as monitor, asyncio.timeout(BEATS + 5):
            beats = 0
            async for entry in monitor.listen():
                command = str(entry["command"])
                if command.startswith(beat):
                    beats += 1
                    if beats == BEATS + 1:
                        break
                if beats:
                    seen[command.split(" ", 1)[0].upper()] += 1
    finally:
        await client.aclose()
    return seen


async def test_an_idle_workers_background_commands_are_at_most_two_a_second_with_10_views_as_with_1000(
    tmp_path: Path, redis_db: str
) -> None:
    held_elsewhere(tmp_path / "app.db", 5)
    phantom = aioredis.Redis.from_url(redis_db)
    try:  # w2 is alive for the whole test without sending a command in the windows counted
        await phantom.set(heartbeat_key("w2"), b"1", px=60_000)
    finally:
        await phantom.aclose()
    async with in_process_server(tmp_path, worker_app, redis_url=redis_db, worker_id="w1") as server:
        node = server.webapp.node
        assert isinstance(node, Node)
        keys = [view_digest(f"attached-{n}") for n in range(1000)]
        for key in keys[:10]:  # as ten attaches here would
            await node.leases.claim(key)
        few = await per_beats(redis_db, "w1")
        for key in keys[10:]:
            await node.leases.claim(key)
        many = await per_beats(redis_db, "w1")
    for seen in (few, many):
        assert set(seen) == {"SET", "MGET"}, seen  # the heartbeat and the look at w2's: no script, no GET per view
        assert seen["SET"] == BEATS and abs(seen["MGET"] - BEATS) <= 1, seen  # the look runs on a timer of its own
        assert sum(seen.values()) <= 2 * BEATS + 1, seen
    assert abs(few["MGET"] - many["MGET"]) <= 1 and few["SET"] == many["SET"], (few, many)
