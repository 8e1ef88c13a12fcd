"""Redis as operators run it, from Debian's redis-server on free loopback ports: a 3-master Redis Cluster, a master
with a replica watched by a Sentinel (a failover on demand), and a Redis serving only TLS. Each starts its
processes in parallel and is stopped (folders removed) by `close()`."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.redis import RedisServer, free_port
from tests.support.tls import make_certificate

__all__ = ["RedisCluster", "SentinelSetup", "TlsRedis", "start_cluster", "start_sentinel", "start_tls_redis"]

_READY = 15.0  # seconds for a set of servers to agree (cluster state ok, replica in sync, sentinel watching)
MASTER = "webapp"


def _folder(kind: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"webapp-{kind}-", dir="/tmp"))


def _cli(port: int, *args: str, tls: Path | None = None) -> str:
    security = ["--tls", "--cacert", str(tls)] if tls is not None else []
    done = subprocess.run(
        ["redis-cli", "-p", str(port), *security, *args], check=True, capture_output=True, text=True, timeout=10
    )
    return done.stdout


def _until(check: str, port: int, *args: str) -> None:
    """Until `redis-cli -p port args…` prints `check` (bounded)."""
    deadline = time.monotonic() + _READY
    while check not in _cli(port, *args):
        if time.monotonic() > deadline:
            raise RuntimeError(f"redis on {port} never said {check!r} to {args}")
        time.sleep(0.05)


def _start_all(servers: list[RedisServer]) -> None:
    with ThreadPoolExecutor(len(servers)) as pool:
        list(pool.map(RedisServer.start, servers))


@dataclass
class RedisCluster:
    """Three masters, no replicas; `url` is the `redis+cluster://` URL naming every node."""

    folder: Path
    nodes: list[RedisServer] = field(default_factory=list[RedisServer])

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{node.port}" for node in self.nodes)

    def flush(self) -> None:
        for node in self.nodes:
            _cli(node.port, "FLUSHALL")

    def close(self) -> None:
        for node in self.nodes:
            node.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster() -> RedisCluster:
    folder = _folder("cluster")
    cluster = RedisCluster(folder)
    for _ in range(3):
        port = free_port()
        # the cluster bus on a free port of its own (by default port + 10000, which a high free port cannot have)
        options = (
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-port",
            str(free_port()),
        )
        (folder / str(port)).mkdir()
        cluster.nodes.append(
            RedisServer(folder / str(port), port, options=(*options, "--cluster-node-timeout", "2000"))
        )
    try:
        _start_all(cluster.nodes)
        addresses = [f"127.0.0.1:{node.port}" for node in cluster.nodes]
        _cli(cluster.nodes[0].port, "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes")
        for node in cluster.nodes:
            _until("cluster_state:ok", node.port, "CLUSTER", "INFO")
    except BaseException:
        cluster.close()
        raise
    return cluster


@dataclass
class SentinelSetup:
    """A master and its replica, watched by one Sentinel (`down-after-milliseconds` 1000); `url` names the Sentinel
    and the master's name."""

    folder: Path
    servers: list[RedisServer]
    sentinel: RedisServer

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.sentinel.port}/{MASTER}/0"

    def master_port(self) -> int:
        answer = _cli(self.sentinel.port, "SENTINEL", "get-master-addr-by-name", MASTER).split()
        return int(answer[1])

    def failover(self) -> int:
        """Promote the replica now (the old master becomes its replica); the new master's port."""
        old = self.master_port()
        deadline = time.monotonic() + _READY
        # NOGOODSLAVE until the Sentinel has seen the replica in sync (redis-cli says so on stdout, exit code 0)
        while "OK" not in _cli(self.sentinel.port, "SENTINEL", "FAILOVER", MASTER):
            if time.monotonic() > deadline:
                raise RuntimeError("the Sentinel found no replica to promote")
            time.sleep(0.1)
        while self.master_port() == old:
            if time.monotonic() > deadline:
                raise RuntimeError("the Sentinel never promoted the replica")
            time.sleep(0.05)
        return self.master_port()

    def flush(self) -> None:
        _cli(self.master_port(), "FLUSHALL")

    def close(self) -> None:
        for server in (*self.servers, self.sentinel):
            server.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_sentinel() -> SentinelSetup:
    folder = _folder("sentinel")
    master, replica, watcher = free_port(), free_port(), free_port()
    servers = [RedisServer(_sub(folder, master), master), RedisServer(_sub(folder, replica), replica)]
    servers[1].options = ("--replicaof", "127.0.0.1", str(master))
    config = folder / "sentinel.conf"
    config.write_text(
        f"port {watcher}\nbind 127.0.0.1\nsentinel monitor {MASTER} 127.0.0.1 {master} 1\n"
        f"sentinel down-after-milliseconds {MASTER} 1000\nsentinel failover-timeout {MASTER} 5000\n"
    )
    sentinel = RedisServer(folder, watcher, command=("redis-server", str(config), "--sentinel"), ready=b"+monitor")
    setup = SentinelSetup(folder, servers, sentinel)
    try:
        _start_all([*servers, sentinel])
        _until("master_link_status:up", replica, "INFO", "replication")
        _until(f"127.0.0.1:{replica}", watcher, "SENTINEL", "REPLICAS", MASTER)
    except BaseException:
        setup.close()
        raise
    return setup


def _sub(folder: Path, port: int) -> Path:
    (folder / str(port)).mkdir()
    return folder / str(port)


@dataclass
class TlsRedis:
    """A Redis that speaks TLS only, its certificate made for this run; `url` is `rediss://` trusting it."""

    folder: Path
    server: RedisServer
    pem: Path

    @property
    def url(self) -> str:
        return f"rediss://127.0.0.1:{self.server.port}/0?ssl_ca_certs={self.pem}"

    def close(self) -> None:
        self.server.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def start_tls_redis() -> TlsRedis:
    folder = _folder("tls")
    pem = make_certificate(folder).pem
    port = free_port()
    files = ("--tls-cert-file", str(pem), "--tls-key-file", str(pem), "--tls-ca-cert-file", str(pem))
    server = RedisServer(folder, port, options=("--tls-auth-clients", "no", *files), tls=True)
    redis = TlsRedis(folder, server, pem)
    try:
        server.start()
    except BaseException:
        redis.close()
        raise
    return redis
