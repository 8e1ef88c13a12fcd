"""How late the worker's event loop runs (apps.md §14.2, §16): a task sleeps a tenth of a second over and over and
notes how much later than asked it woke; `/metrics` shows the worst of the last few seconds."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

__all__ = ["INTERVAL", "WINDOW", "LoopLag"]

INTERVAL = 0.1
"""Seconds the watching task sleeps between two looks."""
WINDOW = 5.0
"""Seconds of looks `LoopLag.seconds` covers."""


class LoopLag:
    """The loop's lag: `start()` on the loop, `stop()` when the server stops; `seconds` reads it (0 before a look)."""

    def __init__(self, *, interval: float = INTERVAL, window: float = WINDOW) -> None:
        self.interval = interval
        self.window = window
        self._looks: deque[tuple[float, float]] = deque()  # (loop time, lag), oldest first
        self._task: asyncio.Task[None] | None = None

    @property
    def seconds(self) -> float:
        """The most a timer ran late in the last `window` seconds."""
        return max((lag for _, lag in self._looks), default=0.0)

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._watch(), name="webapp-loop-lag")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.interval
            await asyncio.sleep(self.interval)
            now = loop.time()
            self._looks.append((now, max(0.0, now - due)))
            while self._looks[0][0] < now - self.window:
                self._looks.popleft()
