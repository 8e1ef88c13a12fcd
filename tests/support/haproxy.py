"""HAProxy for the tests: Debian's haproxy with the shipped `deploy/haproxy.cfg` before two workers, on loopback;
`run_dns_haproxy` runs the compose and Kubernetes configuration (`deploy/k8s/haproxy.cfg`), whose servers come from
DNS, against a test name server, with a stats socket to read its servers' state."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Generator
from pathlib import Path

from tests.support.e2e import REPO

__all__ = ["CONFIG", "DNS_CONFIG", "free_port", "run_dns_haproxy", "run_haproxy", "servers_state"]

CONFIG = REPO / "deploy" / "haproxy.cfg"
DNS_CONFIG = REPO / "deploy" / "k8s" / "haproxy.cfg"
_START_TIMEOUT = 10.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def run_haproxy(port: int, one: int, two: int, *, tls: Path | None = None) -> Generator[subprocess.Popen[bytes]]:
    """HAProxy on `port` in front of the workers on ports `one` and `two`, until the block ends. With `tls` (a PEM
    file with certificate and key, in a temporary folder) it terminates TLS there, as the config's TLS example."""
    env = {
        **os.environ,
        "WEBAPP_LB": f"127.0.0.1:{port}",
        "WEBAPP_W1": f"127.0.0.1:{one}",
        "WEBAPP_W2": f"127.0.0.1:{two}",
    }
    config = CONFIG
    if tls is not None:
        config = tls.parent / "haproxy-tls.cfg"
        text = CONFIG.read_text(encoding="utf-8")
        config.write_text(text.replace('bind "${WEBAPP_LB}"\n', f'bind "${{WEBAPP_LB}}" ssl crt "{tls}"\n'))
    with _haproxy(["-f", str(config)], env, port) as process:
        yield process


@contextlib.contextmanager
def run_dns_haproxy(
    port: int, *, workers: str, dns: int, folder: Path, cookie_key: str = "test-cookie-key"
) -> Generator[Path]:
    """`deploy/k8s/haproxy.cfg` on `port` in front of the workers `workers` (`name:port`) that the name server on
    127.0.0.1:`dns` knows, until the block ends; yields the path of its stats socket (in `folder`)."""
    stats = folder / "haproxy-stats.sock"
    extra = folder / "haproxy-stats.cfg"
    extra.write_text(f'global\n    stats socket "{stats}" mode 600 level operator\n', encoding="utf-8")
    env = {
        **os.environ,
        "WEBAPP_LB": f"127.0.0.1:{port}",
        "WEBAPP_HEALTH": f"127.0.0.1:{free_port()}",
        "WEBAPP_DNS": f"127.0.0.1:{dns}",
        "WEBAPP_WORKERS": workers,
        "WEBAPP_COOKIE_KEY": cookie_key,
    }
    with _haproxy(["-f", str(DNS_CONFIG), "-f", str(extra)], env, port):
        yield stats


def servers_state(stats: Path, backend: str) -> dict[str, str]:
    """The address of each server of `backend` that HAProxy holds as up (`show servers state`)."""
    with socket.socket(socket.AF_UNIX) as channel:
        channel.settimeout(_START_TIMEOUT)
        channel.connect(str(stats))
        channel.sendall(f"show servers state {backend}\n".encode())
        answer = b""
        while chunk := channel.recv(65536):
            answer += chunk
    up: dict[str, str] = {}
    for line in answer.decode().splitlines()[2:]:  # a version line and a header line come first
        fields = line.split()
        if len(fields) > 5 and fields[5] == "2":  # srv_op_state 2: running
            up[fields[3]] = fields[4]  # srv_name → srv_addr
    return up


@contextlib.contextmanager
def _haproxy(arguments: list[str], env: dict[str, str], port: int) -> Generator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["haproxy", "-db", *arguments], env=env, stdin=subprocess.DEVNULL)
    try:
        deadline, pause = time.monotonic() + _START_TIMEOUT, 0.01
        while not _listening(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"haproxy did not listen on {port} (exit code {process.poll()})")
            time.sleep(pause)  # it binds within milliseconds: back off briefly and look again
            pause = min(pause * 2, 0.2)
        yield process
    finally:
        process.terminate()
        process.wait(_START_TIMEOUT)
