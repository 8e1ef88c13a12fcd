"""Owner leases of attached views in Redis: which worker holds a view's tab, and since which attach (its epoch).

Keys carry a digest of the view handle, never the handle: `wv:own:<digest>` = `<worker>|<epoch>` with a TTL,
`wv:epoch:<digest>` counts the attaches, `wv:alive:<worker>` says a worker is up.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import redis.asyncio as aioredis
from redis.exceptions import RedisError

__all__ = ["ClusterUnavailable", "Lease", "Leases", "digest"]

# compare-and-delete: a late release (an old tab's close after the view moved) never removes a newer lease
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


class ClusterUnavailable(Exception):
    """Redis cannot be reached now (the call fails at once, it never waits out its timeout)."""


def digest(handle: str) -> str:
    return hashlib.sha256(handle.encode()).hexdigest()[:32]


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
    """This worker's leases: claim on attach, refresh while attached, release (compare-and-delete) on close."""

    def __init__(self, client: aioredis.Redis, worker: str, *, ttl: float = 15.0, alive_ttl: float = 5.0) -> None:
        self._redis = client
        self.worker = worker
        self._ttl_ms = int(ttl * 1000)
        self._alive_ms = int(alive_ttl * 1000)
        self._held: dict[str, Lease] = {}
        self._release = client.register_script(_RELEASE)

    async def claim(self, key: str) -> Lease:
        """Own the view with digest `key` from now on, with a new epoch (an attach here, wherever it was before)."""
        try:
            epoch = int(await self._redis.incr(f"wv:epoch:{key}"))
            lease = Lease(self.worker, epoch)
            await self._redis.set(f"wv:own:{key}", lease.value, px=self._ttl_ms)
        except RedisError as error:
            raise ClusterUnavailable(str(error)) from None
        self._held[key] = lease
        return lease

    async def owner(self, key: str) -> Lease | None:
        try:
            return Lease.parse(await self._redis.get(f"wv:own:{key}"))
        except RedisError as error:
            raise ClusterUnavailable(str(error)) from None

    async def release(self, key: str) -> bool:
        """Give up the lease this worker holds; False when the view has moved on (a newer epoch) or it expired."""
        lease = self._held.pop(key, None)
        if lease is None:
            return False
        try:
            return bool(await self._release(keys=[f"wv:own:{key}"], args=[lease.value]))
        except RedisError as error:
            raise ClusterUnavailable(str(error)) from None

    async def refresh(self) -> None:
        """Renew this worker's alive key and every lease it holds (after a Redis restart this writes them anew)."""
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(f"wv:alive:{self.worker}", "1", px=self._alive_ms)
                for key, lease in self._held.items():
                    pipe.set(f"wv:own:{key}", lease.value, px=self._ttl_ms)
                await pipe.execute()
        except RedisError as error:
            raise ClusterUnavailable(str(error)) from None

    async def is_alive(self, worker: str) -> bool:
        try:
            return bool(await self._redis.exists(f"wv:alive:{worker}"))
        except RedisError as error:
            raise ClusterUnavailable(str(error)) from None
