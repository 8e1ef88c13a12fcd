"""One worker among several (`webapp serve --redis-url … --worker-id …`): its Redis engine, heartbeat, directory
entries and inbox, the bridges it serves, the calls other workers forward to the views whose tabs it holds, and its
app events' relay."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import mcp_types

from webapp.bridge import TAKEN_OVER_NOTICE, Bridge, ViewError, ViewRecord, view_digest
from webapp.calllog import TOPIC as CALLS_TOPIC
from webapp.calllog import CallLog
from webapp.cluster.engine import Engine
from webapp.cluster.inbox import Inbox, OwnerGone, RequestTimeout
from webapp.cluster.leases import COMMAND_TIMEOUT, ClusterUnavailable, Leases, Look
from webapp.cluster.relay import EventRelay
from webapp.cluster.transport import RedisTransport
from webapp.core.context import (
    CallContext,
    Caller,
    InputRequired,
    LogSender,
    MissingCapability,
    ProgressReporter,
    no_log,
    no_progress,
)
from webapp.core.settings import Settings
from webapp.core.sql import DATABASE_ERRORS
from webapp.events import AppEvents
from webapp.tools.asking import asked_reply, channel_of

__all__ = ["ClusterHost", "Node", "install_cluster", "worker_id"]

log = logging.getLogger(__name__)
_LOOK_EVERY = 1.0  # seconds between two looks at the other workers that hold views (a dead one's are released)
_GONE_AFTER = 2  # looks in a row that found a worker's heartbeat expired before its views are released
_TUNNEL_TIMEOUT = 40.0  # seconds a tunnel's call may take on the worker holding it (a held GET answers within 25)
_HERE = "tunnel"  # the `target` of a tunnel's call passed on by another worker: answered here, not passed on again


class _Tools(Protocol):
    async def call(
        self, name: str, arguments: dict[str, Any] | None, ctx: CallContext | None = None
    ) -> mcp_types.CallToolResult: ...


class _Drain(Protocol):
    @property
    def draining(self) -> bool: ...


Remote = Callable[[str, str, dict[str, Any], Caller], Awaitable[mcp_types.CallToolResult | None]]


class _Tunnel(Protocol):
    def join(self, worker: str, remote: Remote, /) -> None: ...


class _Changes(Protocol):
    updated_topic: str
    """The app-event topic of resource changes: relayed only while a client on some worker hears of them."""

    def listened(self) -> bool:
        """Whether a client here hears of resource changes (a 2025 subscription, a listen stream for resources)."""
        ...


class ClusterHost(Protocol):
    """What a worker needs of the server (`webapp.WebApp`)."""

    settings: Settings
    bridges: list[Bridge]
    events: AppEvents
    calllog: CallLog
    node: Node | None

    @property
    def tunnel(self) -> _Tunnel | None: ...
    @property
    def changes(self) -> _Changes: ...

    @property
    def drain(self) -> _Drain: ...
    @property
    def registry(self) -> _Tools: ...
    @property
    def base_url(self) -> str: ...
    def on_startup(self, hook: Callable[[], Awaitable[None] | None]) -> object: ...
    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None]) -> object: ...


def worker_id(settings: Settings) -> str:
    """`--worker-id`, else one made of the host name and the port (stable across restarts), else a random one."""
    if settings.worker_id:
        return settings.worker_id
    if settings.port:
        return f"{socket.gethostname()}-{settings.port}"[-64:]
    return uuid.uuid4().hex[:16]


def install_cluster(host: ClusterHost) -> Node | None:
    """With `--redis-url`: make this server one worker among several (call after the app factory added its
    bridges). Without it nothing changes."""
    if host.settings.redis_url is None:
        return None
    node = host.node = Node(host, worker_id(host.settings))
    host.on_startup(node.start)
    host.on_shutdown(node.stop)
    return node


class Node:
    """This worker: its bridges follow the shared database and reach the other workers through Redis."""

    def __init__(self, host: ClusterHost, worker: str) -> None:
        self._host = host
        self.worker = worker
        self.engine = Engine(host.settings.redis_url or "", connect_timeout=COMMAND_TIMEOUT)
        self.redis = self.engine.client
        self.leases = Leases(self.redis, worker)
        self.relay = EventRelay(self.redis, worker, host.events, budget=host.settings.events_budget)
        channels = self.relay.channels  # the app events come on the inbox's subscription
        self.inbox = Inbox(self.engine, self.leases, self._serve, on_subscribed=self._reassert, channels=channels)
        self._looker: asyncio.Task[None] | None = None
        self._missing: Counter[str] = Counter()  # workers holding views: how many looks in a row found them dead
        self._released: set[str] = set()  # workers whose views this one released, until they beat again
        self.calls_watched = True
        """Whether a viewer follows the call log on some worker, as of the last look (the first is made at start;
        without Redis then, assumed until the next, so that no call a viewer follows is missed)."""
        self.leases.watching = host.calllog.followed
        self.relay.on_demand[CALLS_TOPIC] = lambda: self.calls_watched
        self.resources_listened = True
        """Whether a client on some worker hears of resource changes (subscribed, or listening), as of the last look
        (assumed until the first, like `calls_watched`)."""
        self.leases.listening = host.changes.listened
        self.relay.on_demand[host.changes.updated_topic] = lambda: self.resources_listened
        self.served: Counter[str] = Counter()
        """Calls other workers forwarded here, by kind: `view` (run here), `tunnel`, `moved` (the view is not here),
        `refused` (this worker is stopping), `taken` (a tab on another worker took a view of this one's); the server's
        metrics read it."""
        self.tunnel_forwarded: Counter[str] = Counter()
        """Tunnel calls sent to the worker holding the tunnel, by outcome: `answered` or `unreachable`."""
        if host.tunnel is not None:  # a tunnel's calls landing here reach the worker holding its page
            host.tunnel.join(worker, self._tunnel_call)
        for bridge in host.bridges:
            bridge.registry.worker = worker  # before the bridges start: they restore only this worker's views
            bridge.transport = RedisTransport(bridge, self.leases, self.inbox)
            if bridge.outcomes is not None:  # a retry takes over the claim of an attempt whose worker died
                bridge.outcomes.worker, bridge.outcomes.gone = worker, self._gone

    async def start(self) -> None:
        """Subscribe to the inbox (and the app events) before the worker serves (it keeps trying when Redis is away)."""
        self.relay.start()
        with contextlib.suppress(ClusterUnavailable):  # before the heartbeat's timer starts: never on its tick
            self._looked(await self.leases.look(()))
        try:
            await self.inbox.start()
        except ClusterUnavailable:
            log.warning("worker %s started without Redis: other workers cannot reach its views yet", self.worker)
        self._looker = asyncio.create_task(self._look_forever(), name=f"looks-{self.worker}")
        log.info("worker %s joined the cluster", self.worker)

    async def stop(self) -> None:
        """Release this worker's directory entries (the calls in flight drained before), stop listening and beating,
        disconnect."""
        if self._looker is not None:
            self._looker.cancel()
            await asyncio.gather(self._looker, return_exceptions=True)
        with contextlib.suppress(ClusterUnavailable):
            await self.leases.release_all()
        await self.relay.stop()
        await self.inbox.stop()
        await self.engine.aclose()

    async def _look_forever(self) -> None:
        """Once a second: no Redis command but one MGET of the heartbeats (of the other workers holding views by the
        database, and the key that says whether a viewer follows the call log), whatever this worker's views number;
        rarer work only when owed."""
        while True:
            await asyncio.sleep(_LOOK_EVERY)
            try:
                for bridge in self._host.bridges:  # a view whose tab is live here stays this worker's, once it beats
                    if self.leases.beating and await bridge.registry.reclaim():  # (until then the others release once)
                        log.warning("views of %s released by another worker were taken back", self.worker)
                if self.leases.unclaimed and self.inbox.subscribed:  # attached while Redis was away
                    await self.leases.claim_pending()
                if not self.inbox.subscribed:  # no word of a tab that takes a view elsewhere can reach this worker now
                    await self._taken_meanwhile()
                if self.relay.owes_resync:  # an event of ours reached no other worker (Redis stalled or away)
                    await self.relay.resync_others()
                await self._release_dead()
            except Exception as error:  # Redis or the database away: the next look tries again
                log.info("worker %s could not look after its views now (%s)", self.worker, type(error).__name__)

    async def _reassert(self) -> None:
        """Redis came back (empty or not): Redis is a cache of the truth, so this worker writes the directory entries
        of the views whose tabs it holds again at once, and takes back their rows if another worker released them
        meanwhile. An entry of another attach found there is newer (the tab moved: it is told so) unless the database
        says the tab is still here: then it is an older one (a failover to a replica that missed the last writes
        brings such entries back), and the view is claimed anew."""
        try:
            lost = await self.leases.reassert()
        except ClusterUnavailable:
            lost = self.leases.lost()  # those found before Redis failed again
        for key in lost:
            found = self._find(key)
            if found is None:
                continue
            bridge, view = found
            if view.client is not None and await self._still_here(bridge, view):  # Redis came back with an older entry
                with contextlib.suppress(ClusterUnavailable):
                    await self.leases.claim(key)
                continue
            log.info("view %r moved to another worker", view)
            bridge.tabs.detach(view, TAKEN_OVER_NOTICE)
        for bridge in self._host.bridges:  # rows released (or closed by a sweep) meanwhile, never a newer holder's
            for view in bridge.registry:
                if view.is_live and view.worker == self.worker:
                    with contextlib.suppress(*DATABASE_ERRORS):
                        await bridge.registry.save(view)
        await self._resync_everywhere()  # the other workers' events may have been missed meanwhile, and ours

    async def _release_dead(self) -> None:
        """Release the views of workers whose heartbeat expired at two looks in a row (killed), so their tabs may
        attach anywhere, calls answer VIEW_UNAVAILABLE at once and the sweeps close what never comes back, and have
        every worker's views read what such a worker changed but never sent (the worker that released its views
        tells the others); note whether a viewer follows the call log (this worker's call records are shared only
        then)."""
        held = {worker for bridge in self._host.bridges for worker in await bridge.registry.holders()}  # by index
        held.discard(self.worker)
        look = self._looked(await self.leases.look(held | self._released))
        alive = look.alive
        self._released -= alive  # beating again: a later absence releases its views again
        if not self.inbox.steady:
            self._missing.clear()  # Redis just came back: every worker is still subscribing again
            return
        dead = held - alive
        missing = Counter({worker: self._missing[worker] + 1 for worker in dead})
        for worker, looks in missing.items():
            if looks >= _GONE_AFTER and worker not in self._released:  # once per absence: no flapping, no storm
                self._released.add(worker)
                released = sum([await bridge.registry.orphan_worker(worker) for bridge in self._host.bridges])
                log.warning("worker %s is gone: its %d view(s) are released", worker, released)
                if released:  # the worker that released them says so: the events the dead one held never went out
                    await self._resync_everywhere()
        self._missing = missing

    def _looked(self, look: Look) -> Look:
        self.calls_watched, self.resources_listened = look.calls_watched, look.resources_listened
        return look

    async def _gone(self, worker: str) -> bool:
        """Whether `worker` is gone (killed), as far as Redis can tell now: nobody reads its inbox."""
        try:
            return self.inbox.steady and not await self.inbox.listening(worker)
        except ClusterUnavailable:
            return False

    async def _resync_everywhere(self) -> None:
        """Every worker's views read their figures anew: this worker's now, the others' once Redis carries the word
        (while it is away, `relay.owes_resync` says so and the next look sends it)."""
        self.relay.resync_here()
        with contextlib.suppress(ClusterUnavailable):
            await self.relay.resync_others()

    async def _still_here(self, bridge: Bridge, view: ViewRecord) -> bool:
        """Whether the database, which every attach writes, says `view`'s tab is still here (or nobody's: released
        while this worker seemed gone, taken back below): a directory entry of another attach is then older, not
        newer (a failover to a replica that missed the last writes brings such entries back)."""
        try:
            return await bridge.registry.holder(view) in (self.worker, None)
        except DATABASE_ERRORS:
            return False

    async def _taken_meanwhile(self) -> None:
        """Detach the tabs of views a tab on another worker took while this worker could not be told (the database,
        which every attach writes, names that worker): one live tab per view across workers, even then."""
        for bridge in self._host.bridges:
            for view in await bridge.registry.taken_elsewhere():
                log.info("view %r was taken by a tab on another worker", view)
                bridge.tabs.detach(view, TAKEN_OVER_NOTICE)
                self.leases.forget(view_digest(view.handle))

    def _keeps(self, key: str, guest: bool) -> bool:
        """Whether the tab here keeps the view with digest `key` from a tab attaching elsewhere (a person's, against a
        guest page); else it is detached, and this worker forgets its entry (the newcomer's claim replaces it)."""
        found = self._find(key)
        if found is None:
            return False
        bridge, view = found
        if not bridge.tabs.yield_to(view, guest):
            return True
        self.leases.forget(key)
        self.served["taken"] += 1
        return False

    def _find(self, key: str) -> tuple[Bridge, ViewRecord] | None:
        for bridge in self._host.bridges:
            view = bridge.registry.by_digest(key)
            if view is not None:
                return bridge, view
        return None

    async def _tunnel_call(
        self, worker: str, tool: str, arguments: dict[str, Any], caller: Caller
    ) -> mcp_types.CallToolResult | None:
        """A tunnel's call answered by `worker`, which holds the tunnel's page; None when it sent back no result,
        ConnectionError when it cannot be reached now (the caller answers a retryable error, never "gone")."""
        body = {"tunnel": True, "tool": tool, "arguments": arguments, "caller": _caller(caller)}
        try:
            reply = await self.inbox.request(worker, body, _TUNNEL_TIMEOUT)
        except (OwnerGone, RequestTimeout, ClusterUnavailable) as error:
            log.info("a tunnel's call could not reach worker %s (%s)", worker, type(error).__name__)
            self.tunnel_forwarded["unreachable"] += 1
            raise ConnectionError(f"worker {worker} cannot be reached now ({type(error).__name__})") from error
        self.tunnel_forwarded["answered"] += 1
        result = reply.get("result")
        return mcp_types.CallToolResult.model_validate(result) if isinstance(result, dict) else None

    async def _serve(
        self, body: Mapping[str, Any], report_progress: ProgressReporter | None, send_log: LogSender | None = None
    ) -> dict[str, Any]:
        """A call another worker forwards to a view whose tab is (or was) here, or to a tunnel held here; `moved`
        when the view is not here. Its progress and log messages go to the caller's client through that worker."""
        principal, session_id, protocol = body.get("caller") or (None, None, "unknown")
        caller = Caller(principal=principal, session_id=session_id, protocol=str(protocol))
        tool, arguments = str(body.get("tool", "")), dict(body.get("arguments") or {})
        if "take" in body:  # a tab attaching on the asking worker wants a view whose tab is here
            return {"keeps": self._keeps(str(body["take"]), bool(body.get("guest")))}
        if body.get("tunnel"):  # answered here whatever it asks (the tunnel checks the caller); passed on never again
            ctx = CallContext(caller=caller, tool=tool, base_url=self._host.base_url, arguments=arguments, target=_HERE)
            self.served["tunnel"] += 1
            return {"result": _dump(await self._host.registry.call(tool, arguments, ctx))}
        key = str(body.get("target", ""))
        found = self._find(key)
        if found is None or (found[1].client is None and not self.leases.holds(key)):
            self.served["moved"] += 1
            return {"moved": True}
        view = found[1]
        if self._host.drain.draining:
            self.served["refused"] += 1
            return {"result": _dump(ViewError("VIEW_UNAVAILABLE", view.app).result())}
        ctx = CallContext(
            caller=caller,
            tool=tool,
            base_url=self._host.base_url,
            arguments=arguments,
            target=key,
            claim=None if body.get("claim") is None else str(body["claim"]),
            report_progress=report_progress or no_progress,
            send_log=send_log or no_log,
            client=channel_of(body.get("asking")),
        )
        self.served["view"] += 1
        try:
            result = await self._host.registry.call(tool, arguments, ctx)
        except (InputRequired, MissingCapability) as asked:  # the calling worker's MCP request answers it
            return asked_reply(asked)
        return {"result": _dump(result)}


def _caller(caller: Caller) -> list[str | None]:
    return [caller.principal, caller.session_id, caller.protocol]


def _dump(result: mcp_types.CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)
