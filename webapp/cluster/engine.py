"""The Redis a worker talks to, whichever engine `--redis-url` names: the client its commands go through (one Redis,
a Redis Cluster, or the master Sentinel names, found again after a failover) and the connections its sharded
subscriptions use (on a Cluster: one per node owning a subscribed channel's slot)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.backoff import NoBackoff

from webapp.core.redis_target import RedisTarget, parse_redis_url

__all__ = ["KEEPALIVE", "Client", "Engine", "raise_if_cancelled"]

Client = aioredis.Redis | RedisCluster
"""A client whose commands reach the right node: SPUBLISH, GET, SET, MGET, INCR and scripts on one slot."""
Address = tuple[str, int]
KEEPALIVE = {socket.TCP_KEEPIDLE: 5, socket.TCP_KEEPINTVL: 2, socket.TCP_KEEPCNT: 3}
"""TCP keepalive of every Redis connection: a peer gone without a FIN (a host lost, a flow dropped by a NAT that
answers nothing) is found within 11 s even on a connection nobody writes to (the subscription's proof is quicker)."""


def raise_if_cancelled(error: BaseException) -> None:
    """Stop here when this task was cancelled meanwhile: redis-py (8.2) can end a cancelled read with the error of
    the connection it closes on the way out, and a loop that retries on Redis errors would then never stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from error


class Engine:
    """One worker's way to Redis: `client` for commands, `subscriptions()` for the connections that subscribe."""

    def __init__(
        self, url: str, *, connect_timeout: float, address_remap: Callable[[Address], Address] | None = None
    ) -> None:
        self.target = parse_redis_url(url)
        self._remap = address_remap
        """A Cluster's node addresses as this worker reaches them (behind a NAT or a port mapping), else as they are."""
        # each command is bounded by `leases.command()`: no socket timeout (see there). No command is sent again by
        # the client (apps.md §14.2): a reset after Redis ran a SPUBLISH or a claim would run it twice; the caller
        # maps the failure to a retryable error instead (a connection found closed before a send is made anew)
        self._options: dict[str, Any] = {
            "socket_timeout": None,
            "socket_connect_timeout": connect_timeout,
            "socket_keepalive": True,
            "socket_keepalive_options": KEEPALIVE,
            "retry": Retry(NoBackoff(), 0),
        }
        self._nodes: dict[str, aioredis.Redis] = {}  # Cluster: a client per node that carries a subscription
        self._sentinel: Sentinel | None = None
        self.client: Client = self._connect(self.target)

    def _connect(self, target: RedisTarget) -> Client:
        if target.kind == "plain":
            return aioredis.Redis.from_url(target.url, **self._options)
        tls: dict[str, Any] = {"ssl": True, "ssl_ca_certs": target.ca_certs} if target.tls else {}
        if target.kind == "cluster":
            seeds = [ClusterNode(host, port) for host, port in target.nodes]
            return RedisCluster(
                startup_nodes=seeds,
                username=target.username,
                password=target.password,
                address_remap=self._remap,
                **self._options,
                **tls,
            )
        timeout = self._options["socket_connect_timeout"]
        keepalive = {name: self._options[name] for name in ("socket_keepalive", "socket_keepalive_options")}
        sentinels = {"password": target.sentinel_password, "socket_connect_timeout": timeout, **keepalive}
        # each new connection asks the sentinels for the master first (`SentinelManagedConnection`), so a reconnect
        # after a failover reaches the new master, never the demoted one
        self._sentinel = Sentinel(target.nodes, sentinel_kwargs={**sentinels, **tls}, **tls)
        return self._sentinel.master_for(target.master, password=target.password, db=target.db, **self._options)

    @property
    def sharded(self) -> bool:
        """Whether keys and channels live on several nodes (a Redis Cluster)."""
        return isinstance(self.client, RedisCluster)

    async def subscriptions(self, channels: Sequence[str]) -> list[tuple[aioredis.Redis, list[str]]]:
        """The clients to subscribe `channels` on, each with the channels it carries: the command client itself on
        one Redis; on a Cluster one per node owning a channel's slot, read from the slot map as it is now."""
        if not isinstance(self.client, RedisCluster):
            return [(self.client, list(channels))]
        await self.client.initialize()
        groups: dict[str, tuple[aioredis.Redis, list[str]]] = {}
        for channel in channels:
            node = self.client.get_node_from_key(channel)  # SlotNotCoveredError while no node serves the slot
            assert node is not None  # (None only for a replica asked for)
            if node.name not in self._nodes:  # (its address as this worker reaches it: remapped already)
                options = self._plain_node_options()
                self._nodes[node.name] = aioredis.Redis(host=node.host, port=int(node.port), **options)
            groups.setdefault(node.name, (self._nodes[node.name], []))[1].append(channel)
        for name in set(self._nodes) - set(groups):  # a node that left the slot map (or serves none of ours now)
            await self._nodes.pop(name).aclose()
        return list(groups.values())

    def _plain_node_options(self) -> dict[str, Any]:
        target = self.target
        tls: dict[str, Any] = {"ssl": True, "ssl_ca_certs": target.ca_certs} if target.tls else {}
        return {"username": target.username, "password": target.password, **self._options, **tls}

    def follows_master(self, pubsub: PubSub) -> bool:
        """Whether `pubsub` still reads from the master Sentinel names. A demoted master keeps its subscribers, so
        after a failover they would hear nothing published on the new one; the pool learns the new master's address
        as soon as a command of this worker (its heartbeat, each second) reconnects."""
        pool = self.client.connection_pool if isinstance(self.client, aioredis.Redis) else None
        connection = pubsub.connection
        if not isinstance(pool, SentinelConnectionPool) or pool.master_address is None or connection is None:
            return True
        return (getattr(connection, "host", None), getattr(connection, "port", None)) == tuple(pool.master_address)

    async def follow_master(self, pubsubs: Sequence[PubSub]) -> bool:
        """Whether `pubsubs` still read from the master Sentinel names now (always on other engines). A failover
        leaves the old master serving its clients until the Sentinel demotes it, seconds later, so a worker asks a
        Sentinel (one command to the Sentinel, none to Redis) at each heartbeat; the pool then drops its connections
        to the old master."""
        if self._sentinel is None or not isinstance(self.client, aioredis.Redis):
            return True
        pool = self.client.connection_pool
        assert isinstance(pool, SentinelConnectionPool)
        await pool.get_master_address()
        return all(self.follows_master(pubsub) for pubsub in pubsubs)

    def topology_changed(self) -> None:
        """A subscription broke: on a Cluster the slot map is read again before the next `subscriptions()`."""
        if isinstance(self.client, RedisCluster):
            self.client._initialize = True  # pyright: ignore[reportPrivateUsage] (redis-py's own "refresh" flag)

    async def aclose(self) -> None:
        for client in self._nodes.values():
            await client.aclose()
        self._nodes.clear()
        await self.client.aclose()
        if self._sentinel is not None:
            for sentinel in self._sentinel.sentinels:
                await sentinel.aclose()
