"""A worker's background Redis traffic (apps.md §14.1, §14.2): with views attached and another worker holding views,
an idle worker sends at most two and a half commands a second — its heartbeat, one look at the other workers' and,
every second beat, the PING that proves its subscription still receives — as many with 1,000 views as with 10, and
never a script over its views' keys."""

from __future__ import annotations

from pathlib import Path

import redis.asyncio as aioredis

from tests.support.cluster import held_elsewhere, per_beats, worker_app
from tests.support.fuzz_server import in_process_server
from webapp.bridge import view_digest
from webapp.cluster import Node, heartbeat_key

BEATS = 2  # heartbeat intervals (one second each) counted per measurement


async def test_an_idle_workers_background_commands_are_at_most_two_and_a_half_a_second_with_10_views_as_with_1000(
    tmp_path: Path, redis_db: str
) -> None:
    await held_elsewhere(tmp_path / "app.db", 5)
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
        few = await per_beats(redis_db, "w1", BEATS)
        for key in keys[10:]:
            await node.leases.claim(key)
        many = await per_beats(redis_db, "w1", BEATS)
    # the same with 1,000 views as with 10: in each window its heartbeats, a look a second and a proof every second
    # beat, nothing per view (the look runs on a timer of its own, so a window may hold one look more or one fewer)
    for seen in (few, many):
        seen.pop("HELLO", None)  # a connection's handshake: when the look and the beat meet, the pool opens a second
        assert set(seen) == {"SET", "MGET", "PING"}, seen  # no script, no GET per view
        assert seen["SET"] == BEATS and abs(seen["MGET"] - BEATS) <= 1 and seen["PING"] == BEATS // 2, seen
        assert sum(seen.values()) <= 2.5 * BEATS + 1, seen
