"""What Redis spent over a measuring window, from its own counters: calls and in-command µs per command
(`INFO commandstats`), its CPU (`INFO cpu`), the bytes it read and wrote (`INFO stats`) and each command's p99.9 latency
(`INFO latencystats`); a window starts with `CONFIG RESETSTAT`. Also: C `redis-cli` subscribers that read a channel
as a worker would (Redis does the same work whatever language drains it), and a least-squares fit."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

__all__ = ["RedisStats", "Window", "fit", "redis_cli_subscribers"]

_OWN = frozenset({"info", "config|resetstat", "config|get", "ping", "client|list"})  # the measuring's own commands


@dataclass(frozen=True)
class Window:
    """Redis' work over one window."""

    seconds: float
    cpu: float
    """Redis' CPU seconds (user + system, every thread)."""
    calls: dict[str, int]
    """Calls per command (lower case, subcommands as `pubsub|numsub`), the measuring's own left out."""
    usec: dict[str, float]
    """In-command µs per command over the window."""
    p999: dict[str, float]
    """Each command's p99.9 latency in µs over the window."""
    bytes_in: int
    bytes_out: int
    writes: int
    """Redis' write system calls (/proc/PID/io `syscw`): a delivery costs one unless several share a loop turn."""

    @property
    def commands(self) -> int:
        return sum(self.calls.values())


class RedisStats:
    """Reads one Redis server's counters; `window()` measures the block it wraps."""

    def __init__(self, port: int) -> None:
        self._redis = redis.Redis(port=port)

    def close(self) -> None:
        self._redis.close()

    def _writes(self) -> int:
        for line in Path(f"/proc/{self.pid()}/io").read_text().splitlines():
            if line.startswith("syscw:"):
                return int(line.split()[1])
        return 0

    def _cpu(self) -> float:
        info = self._redis.info("cpu")
        return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])

    def pid(self) -> int:
        return int(self._redis.info("server")["process_id"])

    @contextmanager
    def window(self) -> Generator[list[Window]]:
        """Measure the block: the yielded list holds its `Window` once the block ended."""
        self._redis.config_resetstat()
        cpu, writes, started = self._cpu(), self._writes(), time.monotonic()
        into: list[Window] = []
        yield into
        seconds, cpu, writes = time.monotonic() - started, self._cpu() - cpu, self._writes() - writes
        stats, commands, latency = (self._redis.info(section) for section in ("stats", "commandstats", "latencystats"))
        calls: dict[str, int] = {}
        usec: dict[str, float] = {}
        for key, value in commands.items():
            name = key.removeprefix("cmdstat_")
            if name not in _OWN and isinstance(value, dict):
                calls[name], usec[name] = int(value["calls"]), float(value["usec"])
        p999: dict[str, float] = {}
        for key, value in latency.items():
            name = key.removeprefix("latency_percentiles_usec_")
            if name in calls and isinstance(value, dict):
                p999[name] = float(value.get("p99.9", 0.0))
        into.append(
            Window(
                seconds,
                cpu,
                calls,
                usec,
                p999,
                int(stats["total_net_input_bytes"]),
                int(stats["total_net_output_bytes"]),
                writes,
            )
        )


@contextmanager
def redis_cli_subscribers(port: int, channels: Sequence[str], *, sharded: bool) -> Generator[None]:
    """One `redis-cli (S)SUBSCRIBE` process per channel until the block ends (each drains into /dev/null)."""
    verb = "SSUBSCRIBE" if sharded else "SUBSCRIBE"
    processes = [
        subprocess.Popen(["redis-cli", "-p", str(port), verb, channel], stdout=subprocess.DEVNULL)
        for channel in channels
    ]
    try:
        yield
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(10)


def fit(points: Sequence[tuple[Sequence[float], float]]) -> tuple[list[float], list[float]]:
    """Least squares of `y = Σ kᵢ·xᵢ` over `(xs, y)` points (normal equations, Gauss-Jordan): the coefficients, and
    the relative residual of each point."""
    size = len(points[0][0])
    matrix = [[sum(xs[i] * xs[j] for xs, _ in points) for j in range(size)] for i in range(size)]
    vector = [sum(xs[i] * y for xs, y in points) for i in range(size)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda row: abs(matrix[row][column]))
        if abs(matrix[pivot][column]) < 1e-12:
            raise ValueError("the operating points do not tell the unit costs apart: vary their mix")
        matrix[column], matrix[pivot] = matrix[pivot], matrix[column]
        vector[column], vector[pivot] = vector[pivot], vector[column]
        for row in range(size):
            if row != column:
                factor = matrix[row][column] / matrix[column][column]
                matrix[row] = [a - factor * b for a, b in zip(matrix[row], matrix[column], strict=True)]
                vector[row] -= factor * vector[column]
    coefficients = [vector[i] / matrix[i][i] for i in range(size)]
    residuals = [
        abs(sum(k * x for k, x in zip(coefficients, xs, strict=True)) - y) / y if y else 0.0 for xs, y in points
    ]
    return coefficients, residuals
