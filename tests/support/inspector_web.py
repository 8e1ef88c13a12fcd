"""The pinned official MCP Inspector in web mode (`--web`) on free loopback ports, and its deep links.

The Inspector renders MCP Apps in a sandbox on a second port (and on a third for apps that declare `ui.domain`);
`open_app_link` builds the deep link that connects to a server and opens one app with its arguments.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import socket
import subprocess
import threading
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tests.support.e2e import REPO
from tests.support.security_npm import NODE_BIN

__all__ = ["InspectorWeb", "free_port", "run_inspector_web"]

_READY = "MCP Inspector Web is up and running"
_START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class InspectorWeb:
    process: subprocess.Popen[str]
    port: int
    token: str
    lines: list[str] = field(default_factory=lambda: [])
    _ready: threading.Event = field(default_factory=threading.Event)

    def open_app_link(self, mcp_url: str, app: str, arguments: Mapping[str, Any]) -> str:
        encoded = base64.urlsafe_b64encode(json.dumps(dict(arguments)).encode()).decode().rstrip("=")
        query = {
            "MCP_INSPECTOR_API_TOKEN": self.token,
            "serverUrl": mcp_url,
            "transport": "http",
            "autoConnect": self.token,
            "openApp": app,
            "appArgs": encoded,
            "autoOpen": self.token,
        }
        return f"http://127.0.0.1:{self.port}/?{urlencode(query)}"

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if _READY in line:
                self._ready.set()
        self._ready.set()  # the process ended: nobody waits forever


@contextlib.contextmanager
def run_inspector_web(home: Path) -> Generator[InspectorWeb]:
    """Start `mcp-inspector --web` (Node 22 from `node_modules`) and stop it when the block ends."""
    executable = REPO / "node_modules" / ".bin" / "mcp-inspector"
    if not executable.exists() or not (NODE_BIN / "node").exists():
        raise RuntimeError(f"{executable} is missing: run `make node_modules/.installed` (npm ci) first")
    token = secrets.token_hex(24)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "NODE_OPTIONS"))}
    env.update(
        PATH=os.pathsep.join([str(NODE_BIN), env.get("PATH", "")]),
        HOME=str(home),
        NO_COLOR="1",
        HOST="127.0.0.1",
        CLIENT_PORT=str(port),
        MCP_SANDBOX_PORT=str(free_port()),
        MCP_APP_ORIGIN_PORT=str(free_port()),
        MCP_AUTO_OPEN_ENABLED="false",
        MCP_INSPECTOR_API_TOKEN=token,
        MCP_INSPECTOR_SECRET_STORE="memory",
        MCP_CATALOG_PATH=str(home / "catalog.json"),
    )
    process = subprocess.Popen(
        [str(executable), "--web"],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    inspector = InspectorWeb(process, port, token)
    pump = threading.Thread(target=inspector._pump, daemon=True)  # pyright: ignore[reportPrivateUsage]
    pump.start()
    try:
        if not inspector._ready.wait(_START_TIMEOUT) or process.poll() is not None:  # pyright: ignore[reportPrivateUsage]
            raise RuntimeError("the Inspector did not start:\n" + "\n".join(inspector.lines))
        yield inspector
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        pump.join(10)
        if process.stdout is not None:
            process.stdout.close()
