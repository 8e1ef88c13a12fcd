"""`make cluster`: Redis, two webapp workers and HAProxy (`deploy/haproxy.cfg`) on loopback, until Ctrl-C.

The workers share one SQLite database (`--db`, default `inventory.db`) and a Redis of their own (no persistence,
on a free port); HAProxy listens on `--port` and every view link points at it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STARTUP_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_listening(port: int, process: subprocess.Popen[bytes], name: str) -> None:
    deadline, pause = time.monotonic() + STARTUP_TIMEOUT, 0.02
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"cluster: {name} did not start on port {port}")
        time.sleep(pause)  # a process starting up: look again shortly
        pause = min(pause * 2, 0.5)


@contextlib.contextmanager
def running(command: list[str], name: str, port: int, env: dict[str, str] | None = None) -> Generator[None]:
    # a session of its own: Ctrl-C reaches this script only, which stops the balancer, the workers, then Redis
    environment = {**os.environ, **(env or {})}
    process = subprocess.Popen(command, cwd=REPO, env=environment, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_listening(port, process, name)
        yield
    finally:
        if process.poll() is None:
            process.terminate()  # SIGTERM: a worker drains its calls and releases its leases
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="HAProxy's port (default 8080)")
    parser.add_argument("--db", default="inventory.db", help="the workers' shared SQLite file")
    args = parser.parse_args()
    for tool in ("redis-server", "haproxy"):
        if shutil.which(tool) is None:
            raise SystemExit(f"cluster: {tool} is missing (make services installs it)")
    redis_port, one, two = free_port(), free_port(), free_port()
    base = f"http://127.0.0.1:{args.port}"
    redis_dir = tempfile.mkdtemp(prefix="webapp-cluster-redis-")
    redis = ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "", "--appendonly", "no"]
    worker = [sys.executable, "-m", "webapp", "serve", "--redis-url", f"redis://127.0.0.1:{redis_port}/0"]
    worker += ["--request-state-key", secrets.token_hex(32)]  # the same for both workers
    worker += ["--base-url", base, "--db", str(Path(args.db).resolve())]
    balancer = {"WEBAPP_LB": f"127.0.0.1:{args.port}", "WEBAPP_W1": f"127.0.0.1:{one}", "WEBAPP_W2": f"127.0.0.1:{two}"}
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop like Ctrl-C
    try:
        with (
            running([*redis, "--dir", redis_dir], "redis-server", redis_port),
            running([*worker, "--port", str(one), "--worker-id", "w1"], "worker w1", one),
            running([*worker, "--port", str(two), "--worker-id", "w2"], "worker w2", two),
            running(["haproxy", "-db", "-f", str(REPO / "deploy" / "haproxy.cfg")], "haproxy", args.port, balancer),
        ):
            print(f"\ncluster: inventory {base}/inventory", flush=True)
            print(f"cluster: viewer    {base}/viewer (the calls of the worker that serves the page)", flush=True)
            print(f"cluster: MCP       {base}/mcp", flush=True)
            print(
                f"cluster: workers   w1 on :{one}, w2 on :{two}; Redis on :{redis_port}. Ctrl-C stops all.", flush=True
            )
            signal.pause()
    except KeyboardInterrupt:
        print("cluster: stopped", flush=True)
    finally:
        shutil.rmtree(redis_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
