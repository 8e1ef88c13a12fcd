"""A worker's sharded subscription: its channels SSUBSCRIBEd one slot at a time on the node that owns each slot,
read until Redis goes away, then subscribed again with a backoff; while it listens, the worker's heartbeat beats
(a heartbeat never vouches for an inbox nobody reads).

A subscription can go deaf without an error (a NAT or balancer that dropped the flow without a FIN: the socket stays
open and nothing arrives), so every second beat proves the read path: a PING on each subscribed connection, whose
answer must be read by the next proof (two beats later); otherwise the worker stops beating and subscribes again at
once (on a new connection)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Mapping

from redis.asyncio.client import PubSub
from redis.exceptions import RedisClusterException, RedisError

from webapp.cluster.engine import Engine
from webapp.cluster.leases import ClusterUnavailable, Leases, command, raise_if_cancelled

__all__ = ["BEAT_EVERY", "PROVE_EVERY", "Listener"]

log = logging.getLogger(__name__)
BEAT_EVERY = 1.0  # seconds between two heartbeats (the TTL is three of them: one late beat is no death)
PROVE_EVERY = 2  # beats from one proof of the read path to the next (a PING on each subscribed connection)
_RECONNECT = (0.05, 0.5)  # first and longest pause before subscribing again after Redis went away
_SETTLE = 2.0  # seconds after (re)subscribing before a missing heartbeat counts as a worker gone
Handler = Callable[[bytes], None]
"""Called with each message's data, on the loop, in order; must not raise."""


class Listener:
    """`start()` subscribes (before the worker serves); `on_lost` runs when the subscription breaks, `on_subscribed`
    when it is back (after Redis came back, empty or not)."""

    def __init__(
        self,
        engine: Engine,
        leases: Leases,
        handlers: Mapping[str, Handler],
        *,
        on_subscribed: Callable[[], Awaitable[None]] | None = None,
        on_lost: Callable[[], None] = lambda: None,
    ) -> None:
        self._engine = engine
        self._leases = leases
        self._handlers = dict(handlers)
        self._on_subscribed = on_subscribed
        self._on_lost = on_lost
        self._reader: asyncio.Task[None] | None = None
        self.subscribed_at: float | None = None  # loop time of the subscription (None: not subscribed now)

    @property
    def steady(self) -> bool:
        """Whether this worker has listened for a while: only then does another worker's missing heartbeat mean
        that worker is gone (right after Redis came back, every worker is still subscribing again)."""
        since = self.subscribed_at
        return since is not None and asyncio.get_running_loop().time() - since >= _SETTLE

    async def start(self) -> None:
        """Subscribe now (ClusterUnavailable when Redis is down: the worker then keeps trying in the background)."""
        try:
            async with command():
                pubsubs = await self._subscribe()
                await self._leases.beat()
        except ClusterUnavailable:
            self._reader = asyncio.create_task(self._read_forever(None), name=f"listener-{self._leases.worker}")
            raise
        self.subscribed_at = asyncio.get_running_loop().time() - _SETTLE  # Redis was up before: steady at once
        self._reader = asyncio.create_task(self._read_forever(pubsubs), name=f"listener-{self._leases.worker}")

    async def stop(self) -> None:
        """Stop listening; the heartbeat goes at once, so the callers of this worker learn it now."""
        if self.subscribed_at is not None:
            self.subscribed_at = None
            with contextlib.suppress(ClusterUnavailable):
                await self._leases.stop_beating()
        self.subscribed_at = None
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None

    async def _subscribe(self) -> list[PubSub]:
        pubsubs: list[PubSub] = []
        try:
            for client, channels in await self._engine.subscriptions(list(self._handlers)):
                pubsub = client.pubsub()
                pubsubs.append(pubsub)
                for channel in channels:  # one SSUBSCRIBE per slot: a Cluster refuses channels of several slots
                    await pubsub.ssubscribe(channel)
        except BaseException:
            await _close(pubsubs)
            raise
        return pubsubs

    async def _read_forever(self, pubsubs: list[PubSub] | None) -> None:
        pause = _RECONNECT[0]
        try:
            while True:
                try:
                    if pubsubs is None:
                        async with command():
                            pubsubs = await self._subscribe()
                            await self._leases.beat()
                        self.subscribed_at = asyncio.get_running_loop().time()
                        if self._on_subscribed is not None:
                            await self._on_subscribed()
                        log.info("worker %s subscribed again", self._leases.worker)
                    pause = _RECONNECT[0]
                    await self._listen(pubsubs)
                except (RedisError, RedisClusterException, OSError, ClusterUnavailable) as error:
                    raise_if_cancelled(error)
                    log.warning("worker %s lost Redis; subscribing again", self._leases.worker)
                except Exception:  # any other failure (a hook's) must not leave the worker deaf while Redis is up
                    log.exception("worker %s: its subscription failed; subscribing again", self._leases.worker)
                self.subscribed_at = None
                self._on_lost()
                self._engine.topology_changed()
                await _close(pubsubs)
                pubsubs = None
                await asyncio.sleep(pause)  # Redis is away: back off before the next try
                pause = min(pause * 2, _RECONNECT[1])
        finally:
            await _close(pubsubs)

    async def _listen(self, pubsubs: list[PubSub]) -> None:
        """Until a subscription ends (an error, a node that gave up a slot, a failed proof); the heartbeat beats
        meanwhile."""
        handlers = {channel.encode(): handler for channel, handler in self._handlers.items()}
        proofs = [_Proof() for _ in pubsubs]
        tasks = [asyncio.create_task(_read(each, handlers, proof)) for each, proof in zip(pubsubs, proofs, strict=True)]
        tasks.append(asyncio.create_task(self._beat_forever(pubsubs)))
        tasks.append(asyncio.create_task(_prove_forever(pubsubs, proofs)))
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()  # its error, if any: the subscription is subscribed again
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _beat_forever(self, pubsubs: list[PubSub]) -> None:
        """The heartbeat; it ends the subscription when Sentinel has named another master meanwhile."""
        while True:
            await asyncio.sleep(BEAT_EVERY)
            follows = True
            with contextlib.suppress(ClusterUnavailable):  # no Sentinel answers now: listen on where it is
                async with command():
                    follows = await self._engine.follow_master(pubsubs)
            if not follows:
                raise ConnectionError("Sentinel named another master: subscribing there")
            with contextlib.suppress(ClusterUnavailable):  # a late beat is no death: the TTL spans three
                await self._leases.beat()


async def _prove_forever(pubsubs: list[PubSub], proofs: list[_Proof]) -> None:
    """Every `PROVE_EVERY` beats, a PING on each subscribed connection; it ends the subscription (and so the beats)
    when the answer to the one before has not been read by then."""
    while True:
        await asyncio.sleep(PROVE_EVERY * BEAT_EVERY)
        if any(proof.unanswered for proof in proofs):
            raise ConnectionError("a subscription stopped receiving (its PING went unanswered)")
        for pubsub, proof in zip(pubsubs, proofs, strict=True):
            proof.unanswered = True
            async with command():  # the write alone: a held connection takes it, and its answer never comes
                await pubsub.ping()


class _Proof:
    """One subscribed connection's proof: a PING sent, its answer not yet read."""

    __slots__ = ("unanswered",)

    def __init__(self) -> None:
        self.unanswered = False

    def answered(self) -> None:
        self.unanswered = False


async def _read(pubsub: PubSub, handlers: Mapping[bytes, Handler], proof: _Proof) -> None:
    """Messages go to their channels' handlers; a `sunsubscribe` (the slot moved to another node) ends the read.

    Read from the subscription's connection as they come (push replies, or plain ones on RESP2), not through
    `PubSub.listen()`: a worker receives every other worker's app events, and the client's generic path (retries,
    observability hooks, a message dict per message) cost more than the rest of a frame's way to the views."""
    connection = pubsub.connection
    if connection is None:
        raise ConnectionError("the subscription has no connection")
    while True:
        message = await connection.read_response(timeout=math.inf, push_request=True)
        if message == b"PONG":  # a PING's answer on a connection with sharded subscriptions only
            proof.answered()
            continue
        if not isinstance(message, list) or not message:
            continue
        kind = message[0]
        if kind == b"smessage" and len(message) >= 3:
            handler = handlers.get(message[1])
            if handler is not None:
                handler(message[2])
        elif kind == b"pong":  # (on RESP2 with classic subscriptions too)
            proof.answered()
        elif kind == b"sunsubscribe":
            raise ConnectionError("a node gave up a subscribed channel's slot")


async def _close(pubsubs: list[PubSub] | None) -> None:
    for pubsub in pubsubs or ():
        with contextlib.suppress(RedisError, OSError):
            await pubsub.aclose()
