"""The fault proxy the network-fault tests put between a worker and Redis: it passes, cuts a connection after a
command ran, sends a command twice, and holds connections without closing them, against a real Redis."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError

from tests.support.fault_proxy import FaultProxy
from tests.support.redis import RedisServer


def _client(url: str) -> aioredis.Redis:
    return aioredis.Redis.from_url(url, retry=None, socket_timeout=None)


async def test_the_proxy_passes_commands_and_cuts_one_after_it_ran_before_its_reply(redis_server: RedisServer) -> None:
    redis_server.flush()
    with FaultProxy(redis_server.port) as proxy:
        client, direct = _client(proxy.url), _client(redis_server.url)
        try:
            assert await client.incr("counted") == 1
            proxy.cut_after(b"INCR")
            with pytest.raises(RedisConnectionError):
                await client.incr("counted")
            assert await direct.get("counted") == b"2" and proxy.cuts == 1  # it ran; its sender never learnt it
            assert await client.incr("counted") == 3  # a new connection passes
        finally:
            await client.aclose()
            await direct.aclose()


async def test_the_proxy_sends_a_command_twice_and_keeps_the_clients_replies_in_step(redis_server: RedisServer) -> None:
    redis_server.flush()
    with FaultProxy(redis_server.port) as proxy:
        client = _client(proxy.url)
        try:
            proxy.duplicate(b"INCR")
            assert await client.incr("twice") == 1
            assert await client.get("twice") == b"2"  # the copy ran too; the client's next reply is its own
        finally:
            await client.aclose()


async def test_a_black_hole_holds_open_connections_without_closing_them_and_lets_new_ones_pass(
    redis_server: RedisServer,
) -> None:
    redis_server.flush()
    with FaultProxy(redis_server.port) as proxy:
        held, fresh = _client(proxy.url), _client(proxy.url)
        try:
            assert await held.set("key", "1")
            proxy.black_hole()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.5):
                    await held.get("key")
            assert await fresh.get("key") == b"1"  # opened after the fault: it passes
            assert proxy.open_links == 2  # nothing was closed
        finally:
            await held.aclose()
            await fresh.aclose()
