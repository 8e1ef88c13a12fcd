"""The Redis engines operators run, for the cluster tests: a Redis Cluster, a Sentinel-watched master with a replica
and a TLS-only Redis, started once per session and in parallel (about 10 s on this box), stopped at its end."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tests.support.redis_engines import (
    RedisCluster,
    SentinelSetup,
    TlsRedis,
    start_cluster,
    start_sentinel,
    start_tls_redis,
)


@dataclass(frozen=True)
class Engines:
    cluster: RedisCluster
    sentinel: SentinelSetup
    tls: TlsRedis


@pytest.fixture(scope="session")
def engines() -> Iterator[Engines]:
    with ThreadPoolExecutor(3) as pool:
        cluster, sentinel, tls = pool.submit(start_cluster), pool.submit(start_sentinel), pool.submit(start_tls_redis)
    futures = (cluster, sentinel, tls)
    try:
        made = Engines(cluster.result(), sentinel.result(), tls.result())
    except BaseException:
        for future in futures:
            if future.exception() is None:
                future.result().close()
        raise
    try:
        yield made
    finally:
        for each in (made.cluster, made.sentinel, made.tls):
            each.close()
