"""The thread a framework store's connection lives on (apps.md §14.2): its statements run there one after another, in
the order they were handed over, off the event loop, and each gets a deadline counted from its hand-over.

A caller that awaits a statement gets `DatabaseTimeout` at the deadline; a statement still running then is interrupted
(`Database.interrupt`), and one still waiting never runs. A write handed over without waiting fails the same way, in
the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from webapp.core.sql import DatabaseTimeout

__all__ = ["DEADLINE", "DatabaseThread"]

T = TypeVar("T")
log = logging.getLogger(__name__)

DEADLINE = 2.5
"""Seconds a framework statement may take from its hand-over (its wait behind earlier ones included): above Postgres'
`statement_timeout` (2 s, whose clearer error comes first), below the heartbeat's TTL (3 s)."""
_WAITING, _RUNNING, _DONE, _DROPPED = range(4)


class _Job(Generic[T]):
    """One statement (or a few, in one function) on its way through the thread."""

    __slots__ = ("deadline", "future", "loop", "state", "timer", "what", "work")

    def __init__(
        self,
        work: Callable[[], T],
        deadline: float,
        what: str,
        loop: asyncio.AbstractEventLoop | None = None,
        future: asyncio.Future[T] | None = None,
    ) -> None:
        self.work = work
        self.deadline = deadline  # time.monotonic()
        self.what = what
        self.loop = loop
        self.future = future  # None: handed over without waiting
        self.state = _WAITING
        self.timer: asyncio.TimerHandle | None = None  # the loop's call at the deadline


class DatabaseThread:
    """Runs one connection's work in a daemon thread of its own (started on the first hand-over): `run` awaits it,
    `post` hands a write over without waiting; `interrupt` makes the connection's running statement fail."""

    def __init__(self, name: str, interrupt: Callable[[], None], *, deadline: float = DEADLINE) -> None:
        self.name = name
        self.deadline = deadline
        self._interrupt = interrupt
        self._lock = threading.Lock()  # a job's state: waiting → running → done, or dropped (never run)
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    async def run(self, work: Callable[[], T]) -> T:
        """`work()`'s value, computed on the thread after everything handed over before; `DatabaseTimeout` when it
        has not finished within the deadline (then it is interrupted, or never starts)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        job = _Job(work, time.monotonic() + self.deadline, "", loop, future)
        self._hand_over(job, loop)
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if job.state == _WAITING:  # its caller went: it never runs
                    job.state = _DROPPED
            raise

    def post(self, work: Callable[[], object], what: str) -> None:
        """Hand `work` (a write) over without waiting; it runs in order with every other, and a failure is logged with
        `what` (what it writes) instead of raised."""
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # a caller without a loop (a test, a shutdown): only the thread checks the deadline
            loop = None
        self._hand_over(_Job(work, time.monotonic() + self.deadline, what), loop)

    def stop(self) -> None:
        """End the thread after the work handed over before (a later hand-over starts a new one)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._jobs, self._thread = queue.SimpleQueue(), None  # the old thread drains its own queue only

    def _hand_over(self, job: _Job[Any], loop: asyncio.AbstractEventLoop | None) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, args=(self._jobs,), name=f"db-{self.name}", daemon=True)
            self._thread.start()
        self._jobs.put(job)
        if loop is not None:
            job.timer = loop.call_later(self.deadline, self._expire, job)

    def _expire(self, job: _Job[Any]) -> None:
        """On the loop, at the job's deadline: a job still waiting never runs, a running one is interrupted."""
        with self._lock:
            state = job.state
            if state == _WAITING:
                job.state = _DROPPED
            elif state == _RUNNING:
                self._interrupt()  # the statement fails at once; the thread goes on with the next job
        if state not in (_WAITING, _RUNNING):
            return
        if job.future is not None:
            if not job.future.done():
                job.future.set_exception(self._timeout())
        elif state == _WAITING:
            log.warning("%s: %s was not written: no answer within %s s", self.name, job.what, self.deadline)

    def _timeout(self) -> DatabaseTimeout:
        return DatabaseTimeout(f"the database did not answer {self.name}'s statement within {self.deadline} s")

    def _serve(self, jobs: queue.SimpleQueue[_Job[Any] | None]) -> None:
        while (job := jobs.get()) is not None:
            with self._lock:
                late = job.state == _WAITING and time.monotonic() >= job.deadline
                if late or job.state != _WAITING:  # past its deadline (the loop is late to say so), or its caller went
                    job.state = _DROPPED
                else:
                    job.state = _RUNNING
            if job.state == _DROPPED:
                if late:
                    self._settle(job, None, self._timeout())
                continue
            try:
                value, error = job.work(), None
            except BaseException as exc:
                value, error = None, exc
            with self._lock:
                job.state = _DONE
            self._settle(job, value, error)

    def _settle(self, job: _Job[Any], value: Any, error: BaseException | None) -> None:
        if job.future is None:
            if error is not None:
                log.warning("%s: %s was not written (%s: %s)", self.name, job.what, type(error).__name__, error)
            return
        loop = job.loop
        assert loop is not None
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(_settle, job, value, error)


def _settle(job: _Job[Any], value: Any, error: BaseException | None) -> None:
    """On the loop: the awaited job's answer."""
    if job.timer is not None:
        job.timer.cancel()
    future = job.future
    if future is None or future.done():  # its deadline passed first, or its caller went
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
