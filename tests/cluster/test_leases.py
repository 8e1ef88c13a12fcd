"""Owner leases in a real Redis: claims with epochs, compare-and-delete releases, refresh, liveness, no handles."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from tests.support.redis import RedisServer
from webapp.cluster import ClusterUnavailable, Lease, Leases, digest

HANDLE = "view-handle-secret-0123456789"


@pytest_asyncio.fixture
async def client(redis_server: RedisServer) -> AsyncIterator[aioredis.Redis]:
    connection = aioredis.Redis.from_url(redis_server.url, socket_timeout=1, socket_connect_timeout=1)
    try:
        yield connection
    finally:
        await connection.aclose()


async def test_a_claim_makes_the_worker_the_owner_with_a_new_epoch_each_time(client: aioredis.Redis) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    key = digest(HANDLE)
    assert await one.owner(key) is None
    first = await one.claim(key)
    assert await two.owner(key) == first == Lease("w1", 1)
    moved = await two.claim(key)  # the tab reloaded on the other worker
    assert moved == Lease("w2", 2) and await one.owner(key) == moved
    assert 0 < await client.pttl(f"wv:own:{key}") <= 15_000


async def test_a_late_release_by_the_old_owner_leaves_the_new_lease(client: aioredis.Redis) -> None:
    one, two = Leases(client, "w1"), Leases(client, "w2")
    key = digest(HANDLE)
    await one.claim(key)
    await two.claim(key)
    assert await one.release(key) is False
    assert await one.owner(key) == Lease("w2", 2)
    assert await two.release(key) is True and await one.owner(key) is None


async def test_refresh_renews_alive_and_leases_and_writes_them_again_after_a_redis_restart(
    client: aioredis.Redis, redis_server: RedisServer
) -> None:
    one = Leases(client, "w1", ttl=15, alive_ttl=5)
    key = digest(HANDLE)
    await one.claim(key)
    await one.refresh()
    assert await one.is_alive("w1") and not await one.is_alive("w2")
    assert 0 < await client.pttl("wv:alive:w1") <= 5_000
    redis_server.stop()
    with pytest.raises(ClusterUnavailable):
        await one.owner(key)
    redis_server.start()  # an empty Redis: the worker's truth comes back with its next refresh
    await one.refresh()
    assert await one.owner(key) == Lease("w1", 1)


async def test_keys_and_values_carry_digests_never_the_handle(client: aioredis.Redis) -> None:
    leases = Leases(client, "w1")
    await leases.claim(digest(HANDLE))
    await leases.refresh()
    stored = [str(key) for key in await client.keys("*")]
    values = [str(await client.get(key)) for key in stored]
    assert stored and not any(HANDLE in text for text in stored + values)
