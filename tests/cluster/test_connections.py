"""What every Redis connection of a worker is made with (apps.md §14.2), read off real sockets on every engine: TCP
keepalive with tight timeouts (a flow dropped without a FIN is found even where nobody writes), and no command sent
again by the client library after a reset (a SPUBLISH or a claim Redis ran would run twice)."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster

from tests.cluster.conftest import Engines
from tests.cluster.test_engines import KINDS, url_of
from webapp.cluster import Engine, inbox_channel
from webapp.cluster.engine import KEEPALIVE


def _options(connection: Any) -> dict[int, int]:
    """The keepalive options of a connected redis-py connection's socket, as the kernel holds them."""
    sock: socket.socket = connection._writer.transport.get_extra_info("socket")  # pyright: ignore[reportPrivateUsage]
    options = {option: sock.getsockopt(socket.IPPROTO_TCP, option) for option in KEEPALIVE}
    options[socket.SO_KEEPALIVE] = sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
    return options


async def _connections(engine: Engine) -> list[tuple[dict[int, int], int]]:
    """The keepalive options and retries of a connection of the command client (to any node) and of one of the
    subscription's clients."""
    client = engine.client
    found: list[tuple[dict[int, int], int]] = []
    if isinstance(client, RedisCluster):
        await client.ping()
        node = client.get_default_node()
        assert node is not None
        connection = node.acquire_connection()
        found.append((_options(connection), connection.retry.get_retries()))
        node.release(connection)
    else:
        connection = await client.connection_pool.get_connection()
        found.append((_options(connection), connection.retry.get_retries()))
        await client.connection_pool.release(connection)
    ((subscriber, _channels), *_) = await engine.subscriptions([inbox_channel("w-keepalive")])
    pubsub = subscriber.pubsub()
    try:
        await pubsub.ssubscribe(inbox_channel("w-keepalive"))
        assert pubsub.connection is not None
        found.append((_options(pubsub.connection), pubsub.connection.retry.get_retries()))
    finally:
        await pubsub.aclose()
    return found


@pytest.mark.parametrize("kind", ["plain", *KINDS])
async def test_every_redis_connection_keeps_alive_with_tight_timeouts_and_is_never_resent_on(
    kind: str, engines: Engines, redis_db: str
) -> None:
    engine = Engine(redis_db if kind == "plain" else url_of(engines, kind), connect_timeout=2)
    try:
        for options, retries in await _connections(engine):
            assert options == {**KEEPALIVE, socket.SO_KEEPALIVE: 1} and retries == 0
        client = engine.client
        retry = client.retry if isinstance(client, RedisCluster) else client.get_retry()
        assert retry is not None and retry.get_retries() == 0
        assert isinstance(client, RedisCluster | aioredis.Redis)
    finally:
        await engine.aclose()
