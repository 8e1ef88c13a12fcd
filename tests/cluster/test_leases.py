"""Owner leases in a real Redis: claims with epochs, compare-and-delete releases, renewal, liveness, no handles."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from tests.support.redis import RedisServer
from webapp.bridge import view_digest
from webapp.cluster import ClusterUnavailable, Lease, Leases, inbox_channel
from webapp.cluster import leases as leases_module

HANDLE = "view-handle-secret-0123456789"
KEY = view_digest(HANDLE)


@pytest_asyncio.fixture
async def client(redis_db: str) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis_db, socket_timeout=1, socket_connect_timeout=1)
    try:
        yield connection
    finally:
        await connection.aclose()


async def test_a_claim_makes_the_worker_the_owner_with_a_new_epoch_each_time(client: aioredis.Redis) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    assert await one.owner(KEY) is None
    first = await one.claim(KEY)
    assert await two.owner(KEY) == first == Lease("w1", 1)
    moved = await two.claim(KEY)  # the tab reloaded on the other worker
    assert moved == Lease("w2", 2) and await one.owner(KEY) == moved
    assert 0 < await client.pttl(f"wv:own:{KEY}") <= 15_000


async def test_a_late_release_by_the_old_owner_leaves_the_new_lease(client: aioredis.Redis) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    await one.claim(KEY)
    await two.claim(KEY)
    assert await one.release(KEY) is False
    assert await one.owner(KEY) == Lease("w2", 2)
    assert await two.release(KEY) is True and await one.owner(KEY) is None


async def test_renewal_reports_a_lease_another_worker_took_and_never_overwrites_it(client: aioredis.Redis) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    await one.claim(KEY)
    await two.claim(KEY)
    assert await one.renew() == [KEY] and not one.holds(KEY)
    assert await two.renew() == [] and await one.owner(KEY) == Lease("w2", 2)


async def test_renewal_writes_the_leases_again_after_a_redis_restart(
    client: aioredis.Redis, redis_server: RedisServer
) -> None:
    one = Leases(client, "w1", ttl=15)
    await one.claim(KEY)
    redis_server.stop()
    try:
        with pytest.raises(ClusterUnavailable):
            await one.owner(KEY)
        with pytest.raises(ClusterUnavailable):
            await one.claim(view_digest("another view"))  # attached while Redis is away: claimed on renewal
    finally:
        redis_server.start()  # an empty Redis: the worker's truth comes back with its next renewal
    assert await one.renew() == []
    assert await one.owner(KEY) == Lease("w1", 1)
    assert await one.owner(view_digest("another view")) == Lease("w1", 1)


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


async def test_a_worker_is_alive_while_it_listens_on_its_inbox(client: aioredis.Redis) -> None:
    leases = Leases(client, "w1")
    assert not await leases.is_alive("w1")
    pubsub = client.pubsub()
    await pubsub.subscribe(inbox_channel("w1"))
    assert await leases.is_alive("w1") and not await leases.is_alive("w2")
    await pubsub.aclose()


async def test_keys_and_values_carry_digests_never_the_handle(client: aioredis.Redis) -> None:
    leases = Leases(client, "w1")
    await leases.claim(KEY)
    await leases.renew()
    stored = [str(key) for key in await client.keys("*")]
    values = [str(await client.get(key)) for key in stored]
    assert stored and not any(HANDLE in text for text in stored + values)


async def test_attaches_during_a_renewal_never_make_the_worker_lose_its_own_leases(client: aioredis.Redis) -> None:
    leases = Leases(client, "w1")
    keys = [view_digest(f"view-{number}") for number in range(20)]
    await asyncio.gather(*(leases.claim(key) for key in keys))  # (and so as many idle connections)
    for _ in range(5):  # the tabs reload on this worker while a renewal runs, its script not yet in Redis's cache
        await client.script_flush()  # as after a Redis restart: the renewal takes two more round trips
        lost, *_ = await asyncio.gather(leases.renew(), *(leases.claim(key) for key in keys))
        assert lost == [] and await leases.renew() == []  # what this worker holds is what Redis has
        assert all(leases.holds(key) for key in keys)
