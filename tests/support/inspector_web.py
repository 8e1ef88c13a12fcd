"""The pinned official MCP Inspector in web mode (`--web`) on free loopback ports, and its deep links.

The Inspector renders MCP Apps in a sandbox on a second port (and on a third for apps that declare `ui.domain`);
`open_app_link` builds the deep link that connects to a server and opens one app with its arguments.
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import socket
import subprocess
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tests.support.e2e import REPO
from tests.support.security_npm import NODE_BIN, run_node_service

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


@contextlib.contextmanager
def run_inspector_web(home: Path) -> Generator[InspectorWeb]:
    """Start `mcp-inspector --web` (Node 22 from `node_modules`) and stop it when the block ends."""
    executable = REPO / "node_modules" / ".bin" / "mcp-inspector"
    if not executable.exists() or not (NODE_BIN / "node").exists():
        raise RuntimeError(f"{executable} is missing: run `make node_modules/.installed` (npm ci) first")
    token = secrets.token_hex(24)
    port = free_port()
    env = dict(
        HOME=str(home),
        HOST="127.0.0.1",
        CLIENT_PORT=str(port),
        MCP_SANDBOX_PORT=str(free_port()),
        MCP_APP_ORIGIN_PORT=str(free_port()),
        MCP_AUTO_OPEN_ENABLED="false",
        MCP_INSPECTOR_API_TOKEN=token,
        MCP_INSPECTOR_SECRET_STORE="memory",
        MCP_CATALOG_PATH=str(home / "catalog.json"),
    )
    with run_node_service(
        [str(executable), "--web"], lambda line: _READY in line, "the Inspector", env=env, timeout=_START_TIMEOUT
    ) as service:
        yield InspectorWeb(service.process, port, token, service.lines)
