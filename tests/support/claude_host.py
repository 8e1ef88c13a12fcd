"""A harness host with Claude's frame policy (`tests/support/claude/`, notes/claude-inline.md §4): the host page and a
sandbox page on two origins of one loopback server (`127.0.0.1` and a `sandbox-….localhost` name), the sandbox page
served with Claude's content security policy as an HTTP header, built from its query as Claude builds it.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.support.e2e import REPO
from tests.support.harness_host import QuietHandler, serve_bundled_host

__all__ = ["ClaudeHost", "claude_policy", "serve_claude_host"]

_SOURCE = REPO / "tests" / "support" / "claude"
_CLAUDE = "https://assets.claude.ai"


def claude_policy(resources: str, connects: str, frames: str = "") -> str:
    """Claude's sandbox policy (notes/claude-inline.md §4.3) for the space-separated declared domains as kept
    (`frames`: only for a benchmark host that honours frame domains, which Claude does not)."""
    r, c = resources, connects
    return (
        f"default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob: data: {r} {_CLAUDE}; "
        f"style-src 'self' 'unsafe-inline' blob: data: {r} {_CLAUDE}; img-src 'self' data: blob: {r} {_CLAUDE}; "
        f"font-src 'self' data: blob: {r} {_CLAUDE}; media-src 'self' data: blob: {r}; worker-src 'self' blob: {r}; "
        f"connect-src 'self' {c}; frame-src 'self' blob: data: {frames}; object-src 'none'; base-uri 'self'"
    )


@dataclass(frozen=True)
class ClaudeHost:
    """The host page's URL and the sandbox's origin (a different site)."""

    url: str
    sandbox_origin: str


class _Handler(QuietHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != "/mcp_apps":
            super().do_GET()
            return
        query = parse_qs(parts.query)
        policy = claude_policy(*(query.get(name, [""])[0] for name in ("resource-src", "connect-src", "frame-src")))
        body = (Path(str(self.directory)) / "sandbox.html").read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Security-Policy", policy)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve_claude_host(folder: Path) -> Generator[ClaudeHost]:
    """Bundle the harness into `folder` and serve it on a free loopback port until the block ends."""
    with serve_bundled_host(_SOURCE, ("host.html", "sandbox.html"), folder, _Handler, "Claude-policy harness") as port:
        yield ClaudeHost(
            f"http://127.0.0.1:{port}/host.html", f"http://sandbox-{secrets.token_hex(8)}.localhost:{port}"
        )
