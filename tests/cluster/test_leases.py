"""Leases in a real Redis: directory entries with epochs and no TTL, compare-and-delete releases, re-assertion after
a Redis restart, heartbeats with a TTL read in one MGET, no handles in keys or values."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from tests.support.cluster import command_counts
from tests.support.redis import RedisServer
from webapp.bridge import view_digest
from webapp.cluster import ClusterUnavailable, Lease, Leases, heartbeat_key
from webapp.cluster import leases as leases_module

HANDLE = "view-handle-secret-0123456789"
KEY = view_digest(HANDLE)
OWN = f"wv:{{{KEY}}}:own"


@pytest_asyncio.fixture
async def client(redis_db: str) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis_db, socket_timeout=1, socket_connect_timeout=1)
    try:
        yield connection
    finally:
        await connection.aclose()


async def test_a_claim_makes_the_worker_the_owner_with_a_new_epoch_each_time_and_no_ttl(
    client: aioredis.Redis,
) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    assert await one.owner(KEY) is None
    first = await one.claim(KEY)
    assert await two.owner(KEY) == first == Lease("w1", 1)
    moved = await two.claim(KEY)  # the tab reloaded on the other worker
    assert moved == Lease("w2", 2) and await one.owner(KEY) == moved
    assert await client.pttl(OWN) == -1  # the worker's heartbeat is leased, not the view: nothing to renew


async def test_a_late_release_by_the_old_owner_leaves_the_new_entry(client: aioredis.Redis) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    await one.claim(KEY)
    await two.claim(KEY)
    assert await one.release(KEY) is False
    assert await one.owner(KEY) == Lease("w2", 2)
    assert await two.release(KEY) is True and await one.owner(KEY) is None


async def test_reassertion_reports_an_entry_another_worker_took_and_never_overwrites_it(
    client: aioredis.Redis,
) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    await one.claim(KEY)
    await two.claim(KEY)
    assert await one.reassert() == [KEY] and not one.holds(KEY)
    assert await two.reassert() == [] and await one.owner(KEY) == Lease("w2", 2)


async def test_reassertion_writes_the_entries_again_after_a_redis_restart_and_epochs_go_on(
    client: aioredis.Redis, redis_server: RedisServer
) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    await one.claim(KEY)
    await one.claim(KEY)  # epoch 2
    redis_server.stop()
    try:
        with pytest.raises(ClusterUnavailable):
            await one.owner(KEY)
        with pytest.raises(ClusterUnavailable):
            await one.claim(view_digest("another view"))  # attached while Redis is away: claimed on reassertion
        assert one.unclaimed
    finally:
        redis_server.start()  # an empty Redis: the worker's truth comes back when it re-asserts
    assert await one.reassert() == [] and not one.unclaimed
    assert await one.owner(KEY) == Lease("w1", 2)
    assert await one.owner(view_digest("another view")) == Lease("w1", 1)
    assert await two.claim(KEY) == Lease("w2", 3)  # never an epoch the view had before the restart


async def test_a_redis_that_stops_answering_fails_a_command_after_the_command_timeout(
    redis_db: str, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(leases_module, "COMMAND_TIMEOUT", 0.3)
    client = aioredis.Redis.from_url(redis_db, socket_timeout=None)  # as a worker connects: no socket timeout
    try:
        leases = Leases(client, "w1")
        await leases.claim(KEY)
        with redis_server.frozen(), pytest.raises(ClusterUnavailable):
            await leases.owner(KEY)  # without its own bound it would wait for Redis forever
        assert await leases.owner(KEY) == Lease("w1", 1)  # a new connection once Redis answers again
    finally:
        await client.aclose()


async def test_a_worker_is_alive_while_it_beats_and_dead_after_the_ttl_or_at_once_when_it_stops(
    client: aioredis.Redis, redis_server: RedisServer
) -> None:
    one, two = Leases(client, "w1", ttl=0.5), Leases(client, "w2")
    assert await one.alive(["w1", "w2"]) == set()
    await one.beat()
    await two.beat()
    assert 0 < await client.pttl(heartbeat_key("w1")) <= 500
    before = command_counts(redis_server.port).get("mget", 0)
    assert await two.alive(["w1", "w2", "w3"]) == {"w1", "w2"}
    assert command_counts(redis_server.port)["mget"] - before == 1  # every worker's liveness in one read
    async with asyncio.timeout(3):  # w1 stops beating (killed): dead once its heartbeat's TTL has run out
        while await one.is_alive("w1"):
            await asyncio.sleep(0.05)
    await two.stop_beating()  # a stopping worker: its callers learn at once
    assert not await one.is_alive("w2")


async def test_keys_and_values_carry_digests_never_the_handle(client: aioredis.Redis) -> None:
    leases = Leases(client, "w1")
    await leases.claim(KEY)
    await leases.beat()
    await leases.reassert()
    stored = [str(key) for key in await client.keys("*")]
    values = [str(await client.get(key)) for key in stored]
    assert stored and not any(HANDLE in text for text in stored + values)


async def test_attaches_during_a_reassertion_never_make_the_worker_lose_its_own_entries(
    client: aioredis.Redis,
) -> None:
    leases = Leases(client, "w1")
    keys = [view_digest(f"view-{number}") for number in range(20)]
    await asyncio.gather(*(leases.claim(key) for key in keys))  # (and so as many idle connections)
    for _ in range(5):  # the tabs reload on this worker while it re-asserts, its script not yet in Redis's cache
        await client.script_flush()  # as after a Redis restart: the scripts take two more round trips
        lost, *_ = await asyncio.gather(leases.reassert(), *(leases.claim(key) for key in keys))
        assert lost == [] and await leases.reassert() == []  # what this worker holds is what Redis has
        assert all(leases.holds(key) for key in keys)
