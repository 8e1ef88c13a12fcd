"""Request-reply between workers over sharded pub/sub: one inbox channel per worker (`wv:{<worker>}:inbox`), for the
requests to its views and the replies to its own requests, so no request waits on a channel subscribed too late.
A request may ask for progress and for log messages (of a level and above): the owner then sends each report and
message ahead of its reply, on the same channel, and the caller passes them on in order.
The message kinds are `webapp.cluster.messages`'.

A request to a worker that nobody listens for fails at once (SPUBLISH, counted on the channel's own slot node,
reached 0 receivers); one its owner shows no sign of within `ACK_WITHIN` (no acknowledgment — an owner sends one
for a call that runs longer than `ACK_AFTER` —, progress or reply: a deaf subscriber, a lost message) fails then
(`Unacknowledged`); one whose worker dies meanwhile fails once its
heartbeat expires (one shared look at every awaited worker's heartbeat), long before the deadline; one made while this
worker's own inbox is not listening (subscribing again after Redis came back) fails before it is sent. An owner runs a
request once, whatever reaches it twice (a resend after a reset): it remembers the ids it got until their time is up.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, get_args

import mcp_types
import orjson

from webapp.cluster.engine import Engine
from webapp.cluster.leases import ClusterUnavailable, Leases, command, inbox_channel
from webapp.cluster.listener import Listener
from webapp.cluster.messages import Kind, encode
from webapp.core.context import LogSender, ProgressReporter
from webapp.core.tracing import SpanKind, span, trace_carrier

__all__ = ["ACK_WITHIN", "ForwardedLog", "Inbox", "OwnerGone", "RequestTimeout", "Unacknowledged"]

log = logging.getLogger(__name__)
Handler = Callable[[Mapping[str, Any], ProgressReporter | None, LogSender | None], Awaitable[dict[str, Any]]]
"""`handle(body, report_progress, send_log)`: the owner's answer to a request (`report_progress` when the caller wants
reports, `send_log` when it wants log messages: it drops those below the caller's level)."""
ForwardedLog = tuple[str, LogSender]
"""The caller's least severe log level and its sender: the owner's log messages of that level and above reach it."""
LEVELS: Final[tuple[str, ...]] = get_args(mcp_types.LoggingLevel)  # least severe first
_ALIVE_CHECK = 0.25  # seconds between two looks at the awaited workers' heartbeats while requests wait
_REPLY_AGAIN = (0.25, 1.0, 2.0)  # pauses after a reply Redis did not take, before the next try (then given up)
_PING = encode(Kind.PING)
ACK_WITHIN = 1.0  # seconds a caller waits for a first sign of its owner (an acknowledgment, a report or the reply)
ACK_AFTER = 0.25  # seconds an owner runs a call before it acknowledges it (a quicker reply is its own sign)


class OwnerGone(Exception):
    """The worker holding the view is gone: nobody received the request, or its heartbeat stopped."""


class RequestTimeout(Exception):
    """The owner did not answer before the deadline (the action may or may not have run)."""


class Unacknowledged(ClusterUnavailable):
    """The owner showed no sign of the request within `ACK_WITHIN`: it cannot be reached now (the action may or may
    not run; a retry with the same `_call_id` gets its stored outcome)."""


class Inbox:
    """This worker's inbox: `start()` subscribes (before the worker serves), `request()` asks another worker."""

    def __init__(
        self,
        engine: Engine,
        leases: Leases,
        handle: Handler,
        *,
        on_subscribed: Callable[[], Awaitable[None]] | None = None,
        channels: Mapping[str, Callable[[bytes], None]] | None = None,
    ) -> None:
        self._redis = engine.client
        self._leases = leases
        self._handle = handle
        self.worker = leases.worker
        handlers = {inbox_channel(self.worker): self._dispatch, **(channels or {})}
        # more channels (the app events) on the same subscription; after a Redis restart `on_subscribed` re-asserts
        self._listener = Listener(engine, leases, handlers, on_subscribed=on_subscribed, on_lost=self._fail_pending)
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._signs: dict[str, asyncio.Event] = {}  # set once the owner acknowledged a request (or reported on it)
        self._seen: dict[str, float] = {}  # ids of the requests got, until their time is up (loop time): run once
        self._seen_order: deque[tuple[float, str]] = deque()
        self._progress: dict[str, ProgressReporter] = {}  # the callers' reporters, by request id
        self._logs: dict[str, LogSender] = {}  # the callers' log senders, by request id
        self._reported: dict[str, asyncio.Task[None]] = {}  # the last report or log message passed on, by request id
        self._tasks: set[asyncio.Task[None]] = set()
        self._awaited: dict[str, int] = {}  # workers that requests wait for, with how many requests
        self._look: tuple[float, frozenset[str], asyncio.Future[set[str]]] | None = None  # the newest shared look

    @property
    def steady(self) -> bool:
        """Whether this inbox has listened for a while: only then does another worker's missing heartbeat mean that
        worker is gone (right after Redis came back, every worker is still subscribing again)."""
        return self._listener.steady

    async def start(self) -> None:
        """Subscribe now (ClusterUnavailable when Redis is down: the worker then keeps trying in the background)."""
        await self._listener.start()

    @property
    def subscribed(self) -> bool:
        return self._listener.subscribed_at is not None

    async def stop(self) -> None:
        await self._listener.stop()
        for task in tuple(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def request(
        self,
        worker: str,
        body: dict[str, Any],
        timeout: float,
        progress: ProgressReporter | None = None,
        logs: ForwardedLog | None = None,
    ) -> dict[str, Any]:
        """`body` handled by `worker`; its reply. OwnerGone, RequestTimeout, or ClusterUnavailable otherwise (at once
        while this inbox is not listening, e.g. subscribing again after Redis came back: no reply could reach it).
        The owner's progress reports reach `progress`, and its log messages `logs`' sender, all of them in order
        before this returns."""
        with span(_named("webapp forward", body), kind=SpanKind.CLIENT, attributes=self._traced(worker)):
            request_id, message, deadline, answer = self._call(body, timeout, progress, logs)
            try:
                async with command():
                    receivers = await self._redis.spublish(inbox_channel(worker), message)
                if receivers == 0:
                    raise OwnerGone(worker)
                return await self._await(request_id, answer, worker, deadline)
            finally:
                self._forget(request_id)

    async def listening(self, worker: str) -> bool:
        """Whether `worker`'s inbox has a reader now: an exact count (SPUBLISH's, on the channel's slot node)."""
        async with command():
            return int(await self._redis.spublish(inbox_channel(worker), _PING)) > 0

    def _traced(self, owner: str | None = None) -> dict[str, str]:
        return {"webapp.worker": self.worker, **({"webapp.owner": owner} if owner else {})}

    def _call(
        self,
        body: dict[str, Any],
        timeout: float,
        progress: ProgressReporter | None = None,
        logs: ForwardedLog | None = None,
    ) -> tuple[str, bytes, float, asyncio.Future[dict[str, Any]]]:
        """A new request: its id, message and deadline (`time.monotonic()`), and the future its reply sets (pending
        until popped)."""
        if not self.subscribed:  # the reply would go to a channel nobody reads here: fail now, not at the end
            raise ClusterUnavailable("this worker's inbox is not listening")
        request_id = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        answer: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[request_id] = answer
        self._signs[request_id] = asyncio.Event()
        carried = trace_carrier()  # the owner's span continues this trace (W3C `traceparent`, when traced)
        body = {**body, **carried} if carried else body
        fields: dict[str, Any] = {"id": request_id, "reply_to": self.worker, "ttl": timeout, "body": body}
        if progress is not None:
            self._progress[request_id] = progress
            fields["progress"] = True
        if logs is not None:
            self._logs[request_id] = logs[1]
            fields["log"] = logs[0]
        return request_id, encode(Kind.CALL, **fields), deadline, answer

    def _forget(self, request_id: str) -> None:
        self._pending.pop(request_id, None)
        self._signs.pop(request_id, None)
        self._progress.pop(request_id, None)
        self._logs.pop(request_id, None)
        self._reported.pop(request_id, None)

    async def _await(
        self, request_id: str, answer: asyncio.Future[dict[str, Any]], worker: str, deadline: float
    ) -> dict[str, Any]:
        """The reply, once the progress reports sent before it have reached the caller's reporter."""
        loop = asyncio.get_running_loop()
        sign, unsigned_until = self._signs[request_id], loop.time() + ACK_WITHIN
        self._awaited[worker] = self._awaited.get(worker, 0) + 1
        try:
            while True:
                now = loop.time()
                left = deadline - now
                if left <= 0:
                    raise RequestTimeout(worker)
                if not sign.is_set() and not answer.done() and now >= unsigned_until:
                    raise Unacknowledged(f"worker {worker} did not acknowledge a request within {ACK_WITHIN:g} s")
                wait = min(left, _ALIVE_CHECK, unsigned_until - now if not sign.is_set() else left)
                done, _ = await asyncio.wait({answer}, timeout=max(wait, 0.0))
                if done:
                    if (reporting := self._reported.get(request_id)) is not None:
                        await reporting
                    return answer.result()
                if worker not in await self._alive(worker):
                    raise OwnerGone(worker)
        finally:
            self._awaited[worker] -= 1
            if not self._awaited[worker]:
                del self._awaited[worker]

    async def _alive(self, worker: str) -> set[str]:
        """The awaited workers whose heartbeat is alive: one MGET every `_ALIVE_CHECK` for all of them, shared by
        every waiting request (a thousand held requests to a hundred workers cost no more than one)."""
        now = asyncio.get_running_loop().time()
        look = self._look
        if look is None or worker not in look[1] or (look[2].done() and now - look[0] >= _ALIVE_CHECK):
            workers = frozenset(self._awaited)
            look = (now, workers, asyncio.ensure_future(self._leases.alive(workers)))
            self._look = look
        return await asyncio.shield(look[2])

    def _fail_pending(self) -> None:
        """The subscription broke: replies on their way may be lost, so the requests waiting for one fail now
        (ClusterUnavailable) instead of at their deadline; a retry with the same `_call_id` gets the stored outcome."""
        for answer in self._pending.values():
            if not answer.done():
                answer.set_exception(ClusterUnavailable("the inbox lost Redis while a reply was on its way"))

    def _dispatch(self, message: bytes) -> None:
        try:
            data = orjson.loads(message)
            kind = Kind(data.get("kind"))
        except (orjson.JSONDecodeError, ValueError, AttributeError):
            log.warning("dropped an unreadable inbox message")
            return
        request_id = str(data.get("id"))
        if (
            kind in (Kind.REPLY, Kind.ACK, Kind.PROGRESS, Kind.LOG)
            and (sign := self._signs.get(request_id)) is not None
        ):
            sign.set()
        if kind is Kind.REPLY:
            answer = self._pending.get(request_id)
            if answer is not None and not answer.done():
                answer.set_result(data.get("body") or {})
        elif kind is Kind.PROGRESS and (reporter := self._progress.get(request_id)) is not None:
            total, text = data.get("total"), data.get("message")
            progress = float(data.get("progress") or 0)
            self._pass_on(request_id, lambda: reporter(progress, _float(total), None if text is None else str(text)))
        elif kind is Kind.LOG and (sender := self._logs.get(request_id)) is not None:
            level, logger = str(data.get("level")), data.get("logger")
            self._pass_on(request_id, lambda: sender(level, data.get("data"), None if logger is None else str(logger)))
        elif kind is Kind.CALL and self._first(request_id, float(data.get("ttl", 0))):
            task = asyncio.create_task(self._serve(data))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _first(self, request_id: str, ttl: float) -> bool:
        """Whether a call with time left reaches this worker for the first time (a copy is dropped: it ran once)."""
        now = asyncio.get_running_loop().time()
        seen, order = self._seen, self._seen_order
        while order and order[0][0] <= now:  # forget the ids whose time is up (a copy of them would be dropped too)
            seen.pop(order.popleft()[1], None)
        if ttl <= 0 or request_id in seen:
            if request_id in seen:
                log.info("dropped a copy of a request this worker got before")
            return False
        seen[request_id] = now + ttl
        order.append((now + ttl, request_id))
        return True

    def _pass_on(self, request_id: str, deliver: Callable[[], Awaitable[None]]) -> None:
        """Hand a progress report or a log message to its caller, after the ones before it."""
        before = self._reported.get(request_id)

        async def deliver_next() -> None:
            if before is not None:
                await before
            try:
                await deliver()
            except Exception:  # a report or a log message is a courtesy: the call goes on without it
                log.debug("a forwarded report or log message was not passed on", exc_info=True)

        task = asyncio.create_task(deliver_next())
        self._reported[request_id] = task
        self._tasks.add(task)  # ended with the inbox, like the requests it serves
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, request: dict[str, Any]) -> None:
        reply_to, request_id = inbox_channel(str(request["reply_to"])), request["id"]

        async def send(message: bytes) -> None:
            try:
                async with command():
                    await self._redis.spublish(reply_to, message)
            except ClusterUnavailable:
                log.debug("a message did not reach %s", request.get("reply_to"))

        async def report_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
            await send(encode(Kind.PROGRESS, id=request_id, progress=progress, total=total, message=message))

        minimum = request.get("log")
        least = LEVELS.index(minimum) if minimum in LEVELS else None

        async def send_log(level: str, data: Any, logger: str | None = None) -> None:
            if level not in LEVELS:
                raise ValueError(f"{level!r} is not an MCP log level; use one of {', '.join(LEVELS)}.")
            if least is not None and LEVELS.index(level) >= least:  # the caller's level: the rest never travel
                await send(encode(Kind.LOG, id=request_id, level=level, data=data, logger=logger))

        def acknowledge() -> None:  # a call that runs longer than a reply takes: its caller hears it is on its way
            task = asyncio.create_task(send(encode(Kind.ACK, id=request_id)))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        asked: Mapping[str, Any] = request.get("body") or {}
        attributes = {"webapp.worker": self.worker, "webapp.caller": str(request.get("reply_to"))}
        acknowledging = asyncio.get_running_loop().call_later(ACK_AFTER, acknowledge)
        try:
            with span(_named("webapp forwarded", asked), kind=SpanKind.SERVER, attributes=attributes, carrier=asked):
                reporter = report_progress if request.get("progress") else None
                body = await self._handle(asked, reporter, send_log if least is not None else None)
        except Exception:
            log.exception("an inbox request failed")
            body = {"error": "the owner could not handle the request"}
        finally:
            acknowledging.cancel()
        reply = encode(Kind.REPLY, id=request_id, body=body)
        for pause in _REPLY_AGAIN:  # a caller still waiting takes a late reply (one it has given up on is ignored)
            try:
                async with command():
                    await self._redis.spublish(reply_to, reply)
                return
            except ClusterUnavailable:
                await asyncio.sleep(pause)
        log.warning("could not send a reply to %s", request.get("reply_to"))


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _named(kind: str, body: Mapping[str, Any]) -> str:
    """A span's name: `kind` and the tool a forwarded call runs."""
    tool = body.get("tool")
    return f"{kind} {tool}" if isinstance(tool, str) and tool else kind
