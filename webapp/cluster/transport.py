"""The bridge's transport over Redis: calls to a view whose tab another worker holds go to that worker's inbox.

A call to a view attached here never touches Redis. Payloads name views by digest (`view_digest`), never by handle:
the `_view` argument stays on the calling worker.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import mcp_types

from webapp.bridge import Bridge, ViewError, ViewRecord, view_digest
from webapp.cluster.inbox import Inbox, OwnerGone, RequestTimeout
from webapp.cluster.leases import ClusterUnavailable, Leases
from webapp.core.context import CallContext
from webapp.responses.builder import tool_error
from webapp.tools.outcomes import Outcome

__all__ = ["RedisTransport"]

log = logging.getLogger(__name__)
_SLACK = 1.0  # seconds a caller waits beyond the owner's own limits (its answer must travel back)


class RedisTransport:
    """One bridge's view of the other workers (they share the database and one Redis)."""

    shared = True

    def __init__(self, bridge: Bridge, leases: Leases, inbox: Inbox) -> None:
        self._bridge = bridge
        self._leases = leases
        self._inbox = inbox
        self.worker = leases.worker
        self._releases: set[asyncio.Task[None]] = set()

    async def attached(self, view: ViewRecord) -> None:
        try:
            await self._leases.claim(view_digest(view.handle))
        except ClusterUnavailable:
            raise ViewError("BRIDGE_UNAVAILABLE", view.app) from None

    def detached(self, view: ViewRecord) -> None:
        task = asyncio.get_running_loop().create_task(self._release(view_digest(view.handle)))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _release(self, key: str) -> None:
        try:
            await self._leases.release(key)
        except ClusterUnavailable:
            log.warning("a lease could not be released (Redis is away; it expires on its own)")

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
        try:
            lease, reply = await self._inbox.request_owner(key, body, timeout, progress=ctx.report_progress)
            if lease is None and not await self._leases.is_alive(view.worker):
                self._bridge.registry.orphan(view)
                raise ViewError("VIEW_UNAVAILABLE", view.app)
        except OwnerGone as gone:
            await self._forget(str(gone), key)
            self._bridge.registry.orphan(view)
            raise ViewError("VIEW_UNAVAILABLE", view.app) from None
        except ClusterUnavailable:
            raise ViewError("BRIDGE_UNAVAILABLE", view.app) from None
        except RequestTimeout:
            raise ViewError("VIEW_TIMEOUT", view.app, seconds=timeout) from None
        if not reply or reply.get("moved"):
            return None  # here, or its worker is up and renews the lease soon (e.g. right after a Redis restart)
        if "result" not in reply:
            return tool_error(
                "INTERNAL_ERROR",
                message=f"[{ctx.tool}] the worker holding the view could not run the call",
                suggestion="Retry in a few seconds with the same _call_id.",
            )
        return mcp_types.CallToolResult.model_validate(reply["result"])

    async def _forget(self, worker: str, key: str) -> None:
        """The owner is gone: drop its lease at once, so the next call does not try it again."""
        try:
            lease = await self._leases.owner(key)
            if lease is not None and lease.worker == worker:
                await self._leases.drop(lease, key)
        except ClusterUnavailable:
            pass
