"""Draining: a stopping server takes no new calls and gives the calls in flight a bounded time to end.

`Drain.call()` tracks one call; `begin()` (on SIGTERM or SIGINT, or when the server stops otherwise) refuses new
ones and ends those still running `grace` seconds later, with `SERVER_STOPPING` instead of their result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable

import mcp_types

from webapp.responses.builder import framework_error

__all__ = ["Drain", "refused_result", "stopped_result"]

log = logging.getLogger(__name__)
_UNWIND = 1.0  # seconds an ended call may take to unwind (its cancellation reaching the handler's await)
_POLL = 0.05  # seconds between two looks at the HTTP server's stop flag


def refused_result(tool: str) -> mcp_types.CallToolResult:
    """The answer to a call that arrives while the server is stopping."""
    return framework_error("SERVER_STOPPING", tool=tool)


def stopped_result(tool: str, grace: float) -> mcp_types.CallToolResult:
    """The answer to a call that was still running when the stopping server's grace time ran out."""
    return framework_error("SERVER_STOPPING", "stopped", tool=tool, grace=f"{grace:g}")


class Drain:
    """The calls in flight of one server and whether it is stopping."""

    def __init__(self, grace: float, *, on_begin: Callable[[], None] | None = None) -> None:
        self.grace = grace
        self._on_begin = on_begin  # e.g. end the long-lived streams (listen), which no grace time would end
        self.stopping = asyncio.Event()
        """Set when the server begins to stop: a long-running tool may await it to end early with its result."""
        self._calls: set[asyncio.Timeout] = set()
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def draining(self) -> bool:
        return self.stopping.is_set()

    @property
    def in_flight(self) -> int:
        """How many calls are running now."""
        return len(self._calls)

    @contextlib.asynccontextmanager
    async def call(self) -> AsyncGenerator[asyncio.Timeout]:
        """Track the block as one call; when the drain ends it, the block raises TimeoutError and the yielded
        deadline is `expired()`."""
        deadline = asyncio.timeout(None)
        async with deadline:
            self._calls.add(deadline)
            self._idle.clear()
            try:
                yield deadline
            finally:
                self._calls.discard(deadline)
                if not self._calls:
                    self._idle.set()

    def begin(self) -> None:
        """Take no new calls, and end the ones in flight `grace` seconds from now (once; later calls do nothing)."""
        if self.draining:
            return
        self.stopping.set()
        if self._on_begin is not None:
            self._on_begin()
        if self._calls:
            log.info("stopping: %d call(s) in flight get %g seconds to end", len(self._calls), self.grace)
        when = asyncio.get_running_loop().time() + self.grace
        for deadline in self._calls:
            deadline.reschedule(when)

    async def finish(self) -> None:
        """Begin (if a signal did not) and wait until no call is in flight, at most the grace time and a little."""
        self.begin()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.grace + _UNWIND):
                await self._idle.wait()
        if self._calls:
            log.warning("stopping with %d call(s) that did not end", len(self._calls))

    async def watch(self, should_exit: Callable[[], bool], then: Callable[[], None]) -> None:
        """Begin as soon as `should_exit()` turns true, wait for the calls in flight, then call `then()`.

        uvicorn offers no event for "stopping" (a signal or a programmatic stop only set its `should_exit`), and it
        waits for its open connections before the app's shutdown runs, so the drain must start from here.
        """
        while not should_exit():
            await asyncio.sleep(_POLL)
        await self.finish()
        then()
