"""Which worker holds a view, leased per worker: a heartbeat key per worker with a short TTL (`wv:{alive}:<worker>`,
one slot, so every worker's liveness is one MGET) and a directory of attached views without TTL
(`wv:{<digest>}:own` = `<worker>|<epoch>`, `wv:{<digest>}:epoch` counting the attaches), written on attach.

Keys carry a digest of the view handle, never the handle. No command touches more than one view or one slot: a
worker's background traffic is its heartbeat, whatever its views. After a Redis restart a worker writes its entries
again (`reassert`); one another worker wrote since (the tab moved) is reported lost, never overwritten.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Collection
from dataclasses import dataclass
from typing import cast

from redis.exceptions import RedisClusterException, RedisError

from webapp.cluster.engine import Client, raise_if_cancelled

__all__ = [
    "COMMAND_TIMEOUT",
    "HEARTBEAT_TTL",
    "LISTENED_KEY",
    "WATCHED_KEY",
    "ClusterUnavailable",
    "Lease",
    "Leases",
    "Look",
    "command",
    "heartbeat_key",
    "inbox_channel",
    "raise_if_cancelled",
]

COMMAND_TIMEOUT = 2.0  # seconds for one Redis command (loopback or LAN: a healthy Redis answers in < 1 ms)
HEARTBEAT_TTL = 3.0  # seconds a worker counts as alive after its last heartbeat (it beats every second)

# claim: a new epoch and the directory entry in one round trip (both keys share the view's hash tag: one slot)
_CLAIM = "local epoch = redis.call('incr', KEYS[2]) redis.call('set', KEYS[1], ARGV[1] .. '|' .. epoch) return epoch"
# compare-and-delete: a late release (an old tab's close after the view moved) never removes a newer entry
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
# write an entry again after a Redis restart, unless another worker wrote one since (1: this worker's; 0: lost)
_REASSERT = """
local now = redis.call('get', KEYS[1])
if now == ARGV[1] then return 1 end
if now then return 0 end
redis.call('set', KEYS[1], ARGV[1])
if tonumber(redis.call('get', KEYS[2]) or '0') < tonumber(ARGV[2]) then redis.call('set', KEYS[2], ARGV[2]) end
return 1
"""
# a heartbeat that also says "a viewer follows the call log here" or "a client hears of resource changes here"
# (every key in the heartbeats' slot)
_BEAT_WATCHING = "for _, key in ipairs(KEYS) do redis.call('set', key, '1', 'PX', ARGV[1]) end"
WATCHED_KEY = "wv:{alive}:calls-watched"
"""Set while some worker's viewer follows the call log (renewed with that worker's heartbeat): the workers share
their call records only then."""
LISTENED_KEY = "wv:{alive}:resources-listened"
"""Set while some worker's MCP client subscribes to or listens for a resource (renewed with that worker's heartbeat):
the workers share resource changes only then."""


class ClusterUnavailable(Exception):
    """Redis cannot be reached now (a call fails at once, it never waits out its timeout)."""


def inbox_channel(worker: str) -> str:
    """The worker's sharded inbox channel (hash-tagged by the worker: on a Cluster it lives on one slot node)."""
    return f"wv:{{{worker}}}:inbox"


def heartbeat_key(worker: str) -> str:
    """The worker's heartbeat key; every worker's shares one hash tag, so one MGET reads them all."""
    return f"wv:{{alive}}:{worker}"


def _own(key: str) -> str:
    return f"wv:{{{key}}}:own"


def _epoch(key: str) -> str:
    return f"wv:{{{key}}}:epoch"


@contextlib.asynccontextmanager
async def command() -> AsyncGenerator[None]:
    """One Redis command within COMMAND_TIMEOUT; ClusterUnavailable when Redis fails or does not answer in time.

    The workers' client has no socket timeout: on Python 3.11 redis-py bounds each write with `asyncio.wait_for`,
    which runs the write in a task of its own, one event-loop turn later (measured: 0.45 ms of a forwarded call
    spent before its request left the worker). A timeout here ends the command, and redis-py then drops its
    connection, so no late answer is read as another command's."""
    try:
        async with asyncio.timeout(COMMAND_TIMEOUT):
            yield
    except (RedisError, RedisClusterException, OSError, TimeoutError) as error:
        raise_if_cancelled(error)
        raise ClusterUnavailable(str(error) or type(error).__name__) from None


@dataclass(frozen=True, slots=True)
class Lease:
    worker: str
    epoch: int

    @property
    def value(self) -> str:
        return f"{self.worker}|{self.epoch}"

    @classmethod
    def parse(cls, value: bytes | str | None) -> Lease | None:
        if value is None:
            return None
        text = value.decode() if isinstance(value, bytes) else value
        worker, _, epoch = text.rpartition("|")
        return cls(worker, int(epoch)) if worker and epoch.isdigit() else None


@dataclass(frozen=True, slots=True)
class Look:
    """What one look at the heartbeats found."""

    alive: set[str]
    calls_watched: bool
    resources_listened: bool


class Leases:
    """This worker's directory entries (claim on attach, release on close) and every worker's heartbeat."""

    def __init__(self, client: Client, worker: str, *, ttl: float = HEARTBEAT_TTL) -> None:
        self._redis = client
        self.worker = worker
        self.ttl = ttl
        self._held: dict[str, Lease | None] = {}  # None: attached while Redis was unreachable, claimed later
        self._lost: list[str] = []  # keys `reassert` found held by another worker, not yet taken by `lost()`
        self._beaten_at: float | None = None  # loop time of the last heartbeat Redis took
        self._claim_script = client.register_script(_CLAIM)
        self._release = client.register_script(_RELEASE)
        self._reassert = client.register_script(_REASSERT)
        self._beat_watching = client.register_script(_BEAT_WATCHING)
        self.watching: Callable[[], bool] = lambda: False
        """Whether a viewer follows the call log on this worker now (the heartbeat says so to the others)."""
        self.listening: Callable[[], bool] = lambda: False
        """Whether an MCP client here hears of a resource's changes now (the heartbeat says so to the others)."""

    async def claim(self, key: str) -> Lease:
        """Own the view with digest `key` from now on, with a new epoch (an attach here, wherever it was before)."""
        self._held[key] = None
        return await self._claim(key)

    async def _claim(self, key: str) -> Lease:
        async with command():
            epoch = int(cast("int", await self._claim_script(keys=[_own(key), _epoch(key)], args=[self.worker])))
        lease = Lease(self.worker, epoch)
        if key in self._held:  # not released meanwhile
            self._held[key] = lease
        else:  # released while the claim was on its way: its entry goes too (compare-and-delete), none is orphaned
            async with command():
                await self._release(keys=[_own(key)], args=[lease.value])
        return lease

    def holds(self, key: str) -> bool:
        """Whether this worker holds (or is claiming) the view with digest `key`."""
        return key in self._held

    @property
    def unclaimed(self) -> bool:
        """Whether some view attached here while Redis was away has no directory entry yet (`claim_pending`)."""
        return any(lease is None for lease in self._held.values())

    async def claim_pending(self) -> None:
        for key, lease in list(self._held.items()):
            if lease is None:
                await self._claim(key)

    async def owner(self, key: str) -> Lease | None:
        async with command():
            return Lease.parse(await self._redis.get(_own(key)))

    async def release(self, key: str) -> bool:
        """Remove this worker's entry; False when the view has moved on (a newer epoch) or Redis lost it."""
        lease = self._held.pop(key, None)
        if lease is None:
            return False
        async with command():
            return bool(await self._release(keys=[_own(key)], args=[lease.value]))

    def forget(self, key: str) -> None:
        """This worker holds the view with digest `key` no more: another worker's tab took it, and its claim replaces
        the entry (nothing is deleted, nothing re-asserted)."""
        self._held.pop(key, None)

    async def drop(self, lease: Lease, key: str) -> None:
        """Remove `lease` of another worker that is gone (compare-and-delete: a newer entry stays)."""
        async with command():
            await self._release(keys=[_own(key)], args=[lease.value])

    async def release_all(self) -> None:
        for key in list(self._held):
            await self.release(key)

    async def reassert(self) -> list[str]:
        """Write this worker's entries again (after a Redis restart; those attached while Redis was away are claimed
        now), one small script per view; returns the keys another worker holds now (their tab moved there). When
        Redis fails again midway, those found so far wait in `lost()`."""
        await self.claim_pending()
        for key, lease in list(self._held.items()):
            if lease is None:
                continue
            async with command():
                kept = await self._reassert(keys=[_own(key), _epoch(key)], args=[lease.value, lease.epoch])
            if not kept and self._held.get(key) == lease:
                self._held.pop(key, None)
                self._lost.append(key)
        return self.lost()

    def lost(self) -> list[str]:
        """The keys `reassert` found held by another worker since the last call (each once)."""
        lost, self._lost = self._lost, []
        return lost

    async def beat(self) -> None:
        """This worker is alive for the next `ttl` seconds (and its viewer follows the call log, while one does)."""
        flags = [key for key, on in ((WATCHED_KEY, self.watching()), (LISTENED_KEY, self.listening())) if on]
        async with command():
            if flags:
                await self._beat_watching(keys=[heartbeat_key(self.worker), *flags], args=[int(self.ttl * 1000)])
            else:
                await self._redis.set(heartbeat_key(self.worker), b"1", px=int(self.ttl * 1000))
        self._beaten_at = asyncio.get_running_loop().time()

    @property
    def beating(self) -> bool:
        """Whether this worker's last heartbeat has a second or more to live: the others take it for alive."""
        beaten = self._beaten_at
        return beaten is not None and asyncio.get_running_loop().time() - beaten < self.ttl - 1.0

    async def stop_beating(self) -> None:
        """This worker stops (its callers learn at once, not when the heartbeat expires)."""
        self._beaten_at = None
        async with command():
            await self._redis.delete(heartbeat_key(self.worker))

    async def alive(self, workers: Collection[str]) -> set[str]:
        """Which of `workers` beat within the TTL: one MGET whatever their number."""
        return (await self.look(workers)).alive if workers else set()

    async def look(self, workers: Collection[str]) -> Look:
        """Which of `workers` beat within the TTL, whether any worker's viewer follows the call log and whether any
        worker's client hears of resource changes: one MGET."""
        names = sorted(workers)
        async with command():
            beats = await self._redis.mget([*(heartbeat_key(name) for name in names), WATCHED_KEY, LISTENED_KEY])
        alive = {name for name, beat in zip(names, beats[:-2], strict=True) if beat is not None}
        return Look(alive, calls_watched=beats[-2] is not None, resources_listened=beats[-1] is not None)

    async def is_alive(self, worker: str) -> bool:
        return worker in await self.alive((worker,))
