"""The network nemesis of `bench.faults`: the faults operators meet between a worker and Redis, made by a fault proxy
in front of each worker's Redis (`tests.support.fault_proxy`), on a standalone Redis (a proxy cannot sit in front of
the master Sentinel names, so the Sentinel run keeps its failover row).

- `cut-after-command`: the next SPUBLISH of each worker reaches Redis, and its connection is reset before the reply;
- `duplicate-command`: the next SPUBLISH of each worker reaches Redis twice;
- `black-hole-10s`: every open connection of one worker to Redis carries nothing for 10 s (new ones pass);
- `partition`: one worker reaches no Redis for 5 s, but keeps the database;
- `delay-200ms`: every chunk to and from Redis waits 200 ms, for 5 s.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping

from tests.support.fault_proxy import FaultProxy

__all__ = ["NETWORK_KINDS", "network_fault"]

NETWORK_KINDS = ("cut-after-command", "duplicate-command", "black-hole-10s", "partition", "delay-200ms")
_HELD = 10.0  # seconds of the black hole
_AWAY = 5.0  # seconds of the partition and of the delay
_SPUBLISH = b"SPUBLISH"


async def network_fault(kind: str, proxies: Mapping[str, FaultProxy], victim: str) -> None:
    """Make the fault on the proxies (`victim`'s alone where it takes one worker) and undo it (returns once it is)."""
    if kind == "cut-after-command":
        cuts = {name: proxy.cuts for name, proxy in proxies.items()}
        for proxy in proxies.values():
            proxy.cut_after(_SPUBLISH)
        await _until(lambda: all(proxy.cuts > cuts[name] for name, proxy in proxies.items()), _AWAY)
    elif kind == "duplicate-command":
        copies = {name: proxy.duplicates for name, proxy in proxies.items()}
        for proxy in proxies.values():
            proxy.duplicate(_SPUBLISH)
        await _until(lambda: all(proxy.duplicates > copies[name] for name, proxy in proxies.items()), _AWAY)
    elif kind == "black-hole-10s":
        proxies[victim].black_hole()
        await asyncio.sleep(_HELD)
    elif kind == "partition":
        proxies[victim].black_hole(new=True)
        await asyncio.sleep(_AWAY)
    else:
        for proxy in proxies.values():
            proxy.delay(0.2)
        await asyncio.sleep(_AWAY)
    for proxy in proxies.values():
        proxy.heal()


async def _until(done: Callable[[], bool], timeout: float) -> None:
    """Until `done()` holds (the fault hit its command), at most `timeout` seconds (a quiet worker may send none)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(timeout):
            while not done():
                await asyncio.sleep(0.05)
