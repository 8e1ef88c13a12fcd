"""HAProxy for the tests: Debian's haproxy with the shipped `deploy/haproxy.cfg` before two workers, on loopback."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Generator
from pathlib import Path

from tests.support.e2e import REPO

__all__ = ["CONFIG", "free_port", "run_haproxy"]

CONFIG = REPO / "deploy" / "haproxy.cfg"
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
    process = subprocess.Popen(["haproxy", "-db", "-f", str(config)], env=env, stdin=subprocess.DEVNULL)
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
