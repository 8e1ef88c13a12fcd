"""Request-reply between workers over Redis pub/sub: one inbox channel per worker (`wv:inbox:<worker>`), for the
requests to its views and the replies to its own requests, so no request waits on a channel subscribed too late.

A request to a worker that nobody listens for fails at once (PUBLISH reached 0 receivers); one whose worker stops
answering fails when the worker's alive key expires or at the deadline, whichever comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from webapp.cluster.leases import ClusterUnavailable, Leases

__all__ = ["Inbox", "OwnerGone", "RequestTimeout"]

log = logging.getLogger(__name__)
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
_ALIVE_CHECK = 1.0  # seconds between two looks at the owner's alive key while a request waits


class OwnerGone(Exception):
    """The worker holding the view is gone: nobody received the request, or its alive key expired."""


class RequestTimeout(Exception):
    """The owner did not answer before the deadline (the action may or may not have run)."""


class Inbox:
    """This worker's inbox: `start()` subscribes (before the worker serves), `request()` asks another worker."""

    def __init__(self, client: aioredis.Redis, leases: Leases, handle: Handler) -> None:
        self._redis = client
        self._leases = leases
        self._handle = handle
        self.worker = leases.worker
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._pubsub = client.pubsub(ignore_subscribe_messages=True)
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            await self._pubsub.subscribe(f"wv:inbox:{self.worker}")
        except RedisError as error:
            raise ClusterUnavailable(str(error)) from None
        self._reader = asyncio.create_task(self._read(), name=f"inbox-{self.worker}")

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        for task in tuple(self._tasks):
            task.cancel()
        with contextlib.suppress(RedisError):
            await self._pubsub.aclose()

    async def request(self, worker: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        """`body` handled by `worker`; its reply. OwnerGone, RequestTimeout, or ClusterUnavailable otherwise."""
        request_id = uuid.uuid4().hex
        deadline = time.time() + timeout
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = answer
        message = {"kind": "call", "id": request_id, "reply_to": self.worker, "deadline": deadline, "body": body}
        try:
            try:
                receivers = await self._redis.publish(f"wv:inbox:{worker}", orjson.dumps(message))
            except RedisError as error:
                raise ClusterUnavailable(str(error)) from None
            if receivers == 0:
                raise OwnerGone(worker)
            return await self._await(answer, worker, deadline)
        finally:
            self._pending.pop(request_id, None)

    async def _await(self, answer: asyncio.Future[dict[str, Any]], worker: str, deadline: float) -> dict[str, Any]:
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise RequestTimeout(worker)
            done, _ = await asyncio.wait({answer}, timeout=min(left, _ALIVE_CHECK))
            if done:
                return answer.result()
            if not await self._leases.is_alive(worker):
                raise OwnerGone(worker)

    async def _read(self) -> None:
        async for message in self._pubsub.listen():
            try:
                data = orjson.loads(message["data"])
            except (orjson.JSONDecodeError, TypeError, KeyError):
                log.warning("dropped an unreadable inbox message")
                continue
            if data.get("kind") == "reply":
                answer = self._pending.get(str(data.get("id")))
                if answer is not None and not answer.done():
                    answer.set_result(data.get("body") or {})
            elif data.get("kind") == "call" and float(data.get("deadline", 0)) > time.time():
                task = asyncio.create_task(self._serve(data))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _serve(self, request: dict[str, Any]) -> None:
        try:
            body = await self._handle(request.get("body") or {})
        except Exception:
            log.exception("an inbox request failed")
            body = {"error": "the owner could not handle the request"}
        reply = {"kind": "reply", "id": request["id"], "body": body}
        try:
            await self._redis.publish(f"wv:inbox:{request['reply_to']}", orjson.dumps(reply))
        except RedisError:
            log.warning("could not send a reply to %s", request.get("reply_to"))
