"""The bridge's transport over Redis: calls to a view whose tab another worker holds go to that worker's inbox (the
worker the database names; the directory's when that one answers that the view moved).

A call to a view attached here never touches Redis. Payloads name views by digest (`view_digest`), never by handle:
the `_view` argument stays on the calling worker.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from typing import Any

import mcp_types

from webapp.bridge import Bridge, ViewError, ViewRecord, view_digest
from webapp.cluster.inbox import Inbox, OwnerGone, RequestTimeout
from webapp.cluster.leases import ClusterUnavailable, Leases
from webapp.core.context import CallContext, no_progress
from webapp.core.sql import DATABASE_ERRORS
from webapp.responses.builder import tool_error
from webapp.tools.asking import Asking, raise_asked
from webapp.tools.outcomes import Outcome

__all__ = ["RedisTransport"]

log = logging.getLogger(__name__)
_SLACK = 1.0  # seconds a caller waits beyond the owner's own limits (its answer must travel back)
_CONFIRM = 0.3  # seconds before a second look at an owner that looked gone
_ASK = 2.0  # seconds the worker holding a view's tab may take to say whether it lets the view go


class RedisTransport:
    """One bridge's view of the other workers (they share the database and one Redis)."""

    shared = True

    def __init__(self, bridge: Bridge, leases: Leases, inbox: Inbox) -> None:
        self._bridge = bridge
        self._leases = leases
        self._inbox = inbox
        self.worker = leases.worker
        self._releases: set[asyncio.Task[None]] = set()
        self.forwarded: Counter[str] = Counter()
        """Calls sent to the worker holding their view, by outcome: `answered`, `moved` (run here after all) or the
        error code the caller got (the server's metrics read it)."""

    async def attached(self, view: ViewRecord) -> None:
        try:
            await self._leases.claim(view_digest(view.handle))
        except ClusterUnavailable:
            raise ViewError("BRIDGE_UNAVAILABLE", view.app) from None

    async def may_take(self, view: ViewRecord, guest: bool) -> bool:
        """Ask the worker whose tab the database names to let the view go (it detaches its tab, or keeps it when it
        is a person's and this is a guest page); a worker that cannot be asked finds the view lost by itself."""
        try:
            holder = await self._bridge.registry.holder(view)
        except DATABASE_ERRORS:
            return True
        if holder is None or holder == self.worker:
            return True
        try:
            reply = await self._inbox.request(holder, {"take": view_digest(view.handle), "guest": guest}, _ASK)
        except (OwnerGone, RequestTimeout, ClusterUnavailable):
            return True
        return not reply.get("keeps")

    def detached(self, view: ViewRecord) -> None:
        task = asyncio.get_running_loop().create_task(self._release(view_digest(view.handle)))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _release(self, key: str) -> None:
        try:
            await self._leases.release(key)
        except ClusterUnavailable:
            log.warning("a directory entry could not be released (Redis is away; the next attach supersedes it)")

    async def forward(self, view: ViewRecord, ctx: CallContext) -> mcp_types.CallToolResult | None:
        if view.worker is None or view.worker == self.worker:
            return None  # nobody else holds it, by the database: no need to ask Redis
        settings = self._bridge.settings
        timeout = settings.wait_for_live + settings.call_timeout + _SLACK
        key = view_digest(view.handle)
        arguments = {name: value for name, value in (ctx.arguments or {}).items() if name != "_view"}
        caller = ctx.caller
        body: dict[str, Any] = {
            "target": key,
            "tool": ctx.tool,
            "arguments": arguments,
            "caller": [caller.principal, caller.session_id, caller.protocol],
        }
        if isinstance(ctx.outcome, Outcome):  # the owner stores the outcome under this worker's claim on the call id
            body["claim"] = ctx.outcome.token
        if isinstance(ctx.client, Asking):  # the owner's handler asks the client through this worker's MCP request
            body["asking"] = ctx.client.carried()
        # the owner sends progress reports (one SPUBLISH each) only when this call's caller asked for them
        progress = None if ctx.report_progress is no_progress else ctx.report_progress
        # and log messages only of the caller's level and above (the owner drops the others before they travel)
        minimum = getattr(ctx.send_log, "minimum", None)  # the MCP request's sender says it (webapp.server.client_logs)
        logs = (minimum, ctx.send_log) if isinstance(minimum, str) else None
        owner = view.worker
        try:
            reply = await self._inbox.request(owner, body, timeout, progress=progress, logs=logs)
            if reply.get("moved"):  # the tab moved since the row was read: the directory names its new worker
                lease = await self._leases.owner(key)
                if lease is not None and lease.worker not in (owner, self.worker):
                    owner = lease.worker
                    reply = await self._inbox.request(owner, body, timeout, progress=progress, logs=logs)
        except OwnerGone:
            if not self._inbox.steady:  # Redis just came back: the holder subscribes again within a second
                raise self._failed(ViewError("BRIDGE_UNAVAILABLE", view.app)) from None
            self._release_gone(owner, key, view)
            raise self._failed(ViewError("VIEW_UNAVAILABLE", view.app)) from None
        except ClusterUnavailable:
            raise self._failed(ViewError("BRIDGE_UNAVAILABLE", view.app)) from None
        except RequestTimeout:
            raise self._failed(ViewError("VIEW_TIMEOUT", view.app, seconds=timeout)) from None
        if not reply or reply.get("moved"):
            self.forwarded["moved"] += 1
            return None  # here, or its worker is up and writes its entry again soon (e.g. right after a Redis restart)
        if "input_required" in reply or "missing_capability" in reply:
            self.forwarded["asked"] += 1
            raise_asked(reply)  # this worker's MCP request answers the round (webapp.server.asking)
        if "result" not in reply:
            self.forwarded["INTERNAL_ERROR"] += 1
            return tool_error(
                "INTERNAL_ERROR",
                message=f"[{ctx.tool}] the worker holding the view could not run the call",
                suggestion="Retry in a few seconds with the same _call_id.",
            )
        self.forwarded["answered"] += 1
        return mcp_types.CallToolResult.model_validate(reply["result"])

    def _failed(self, error: ViewError) -> ViewError:
        self.forwarded[error.code] += 1
        return error

    def _release_gone(self, worker: str, key: str, view: ViewRecord) -> None:
        """The owner looks gone: once a second look agrees (a worker subscribing again is not gone), drop its
        directory entry and release the view, so its tab may attach anywhere. The caller gets VIEW_UNAVAILABLE
        meanwhile."""

        async def confirm() -> None:
            await asyncio.sleep(_CONFIRM)
            try:
                if not self._inbox.steady or await self._inbox.listening(worker):
                    return
                lease = await self._leases.owner(key)
                if lease is not None and lease.worker == worker:
                    await self._leases.drop(lease, key)
            except ClusterUnavailable:
                return
            await self._bridge.registry.orphan(view)

        task = asyncio.get_running_loop().create_task(confirm())
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)
