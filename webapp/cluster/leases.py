"""Owner leases of attached views in Redis: which worker holds a view's tab, and since which attach (its epoch).

Keys carry a digest of the view handle, never the handle: `wv:own:<digest>` = `<worker>|<epoch>` with a TTL, and
`wv:epoch:<digest>` counts the attaches. A worker renews its leases well within the TTL; after a Redis restart the
renewal writes them anew, and a lease another worker took since (the tab moved) is reported lost, never overwritten.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio as aioredis
from redis.exceptions import RedisError

__all__ = ["COMMAND_TIMEOUT", "ClusterUnavailable", "Lease", "Leases", "command", "inbox_channel"]

COMMAND_TIMEOUT = 2.0  # seconds for one Redis command (loopback or LAN: a healthy Redis answers in < 1 ms)

# compare-and-delete: a late release (an old tab's close after the view moved) never removes a newer lease
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
# compare-and-renew: renew this worker's leases (or write them again when Redis lost them); the others are lost
_RENEW = """
local lost = {}
for i, key in ipairs(KEYS) do
  local now = redis.call('get', key)
  if now == false or now == ARGV[i] then
    redis.call('set', key, ARGV[i], 'PX', ARGV[#ARGV])
  else
    table.insert(lost, i)
  end
end
return lost
"""

# look up the lease and, when another worker holds it, publish to that worker's inbox: one round trip for a
# forwarded call ({lease, receivers}; receivers -1: this worker holds it, nothing sent)
_SEND = """
local lease = redis.call('get', KEYS[1])
if not lease then return false end
local worker = string.match(lease, '^(.*)|%d+$')
if worker == nil or worker == ARGV[1] then return {lease, -1} end
return {lease, redis.call('publish', 'wv:inbox:' .. worker, ARGV[2])}
"""


class ClusterUnavailable(Exception):
    """Redis cannot be reached now (a call fails at once, it never waits out its timeout)."""


def inbox_channel(worker: str) -> str:
    return f"wv:inbox:{worker}"


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
    except (RedisError, TimeoutError) as error:
        raise_if_cancelled(error)
        raise ClusterUnavailable(str(error) or type(error).__name__) from None


def raise_if_cancelled(error: BaseException) -> None:
    """Stop here when this task was cancelled meanwhile: redis-py (8.2) can end a cancelled read with the error of
    the connection it closes on the way out, and a loop that retries on Redis errors would then never stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from error


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


class Leases:
    """This worker's leases: claim on attach, renew while attached, release (compare-and-delete) on close."""

    def __init__(self, client: aioredis.Redis, worker: str, *, ttl: float = 15.0) -> None:
        self._redis = client
        self.worker = worker
        self.ttl = ttl
        self._held: dict[str, Lease | None] = {}  # None: attached while Redis was unreachable, claimed on renewal
        self._release = client.register_script(_RELEASE)
        self._renew = client.register_script(_RENEW)
        self._send = client.register_script(_SEND)
        # one claim, renewal or release at a time: a renewal compares Redis with what this worker wrote last, so a
        # claim landing between its look at the leases and its script would make it lose a lease of its own
        self._writing = asyncio.Lock()

    async def claim(self, key: str) -> Lease:
        """Own the view with digest `key` from now on, with a new epoch (an attach here, wherever it was before)."""
        self._held[key] = None
        async with self._writing:
            return await self._claim(key)

    async def _claim(self, key: str) -> Lease:
        async with command():
            epoch = int(await self._redis.incr(f"wv:epoch:{key}"))
            lease = Lease(self.worker, epoch)
            await self._redis.set(f"wv:own:{key}", lease.value, px=int(self.ttl * 1000))
        if key in self._held:  # not released meanwhile
            self._held[key] = lease
        return lease

    def holds(self, key: str) -> bool:
        """Whether this worker holds (or is claiming) the lease of the view with digest `key`."""
        return key in self._held

    async def owner(self, key: str) -> Lease | None:
        async with command():
            return Lease.parse(await self._redis.get(f"wv:own:{key}"))

    async def send_to_owner(self, key: str, message: bytes) -> tuple[Lease | None, int]:
        """Publish `message` to the inbox of the worker holding the lease of `key`, in one round trip: the lease
        (None: nobody holds it) and how many received it (-1: this worker holds it, nothing was sent)."""
        async with command():
            found = cast("list[Any] | None", await self._send(keys=[f"wv:own:{key}"], args=[self.worker, message]))
        if not found:
            return None, -1
        return Lease.parse(found[0]), int(found[1])

    async def release(self, key: str) -> bool:
        """Give up the lease this worker holds; False when the view has moved on (a newer epoch) or it expired."""
        lease = self._held.pop(key, None)
        if lease is None:
            return False
        async with self._writing, command():
            return bool(await self._release(keys=[f"wv:own:{key}"], args=[lease.value]))

    async def drop(self, lease: Lease, key: str) -> None:
        """Remove `lease` of another worker that is gone (compare-and-delete: a newer lease stays)."""
        async with command():
            await self._release(keys=[f"wv:own:{key}"], args=[lease.value])

    async def release_all(self) -> None:
        for key in list(self._held):
            await self.release(key)

    async def renew(self) -> list[str]:
        """Renew every lease this worker holds (claiming those attached while Redis was away); returns the keys
        whose lease another worker holds now (their tab moved there)."""
        async with self._writing:
            return await self._renew_held()

    async def _renew_held(self) -> list[str]:
        for key, lease in list(self._held.items()):
            if lease is None:
                await self._claim(key)
        held = [(key, lease) for key, lease in self._held.items() if lease is not None]
        if not held:
            return []
        keys = [f"wv:own:{key}" for key, _ in held]
        async with command():
            lost = cast(
                "list[int]",
                await self._renew(keys=keys, args=[lease.value for _, lease in held] + [int(self.ttl * 1000)]),
            )
        gone = [held[int(index) - 1][0] for index in lost]
        for key in gone:
            self._held.pop(key, None)
        return gone

    async def is_alive(self, worker: str) -> bool:
        """Whether `worker` listens on its inbox (a killed worker's subscription ends with its connection)."""
        async with command():
            counts = await self._redis.pubsub_numsub(inbox_channel(worker))
        return any(int(count) > 0 for _, count in counts)
