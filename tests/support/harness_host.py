"""The harness MCP Apps host (`tests/support/harness/`): bundled with esbuild from the pinned ext-apps SDK and served
from a loopback port of its own, so the view page's frame is cross-origin to it as in a real host.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import threading
from collections.abc import Generator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.e2e import REPO
from tests.support.security_npm import run_npm_bin

__all__ = ["QuietHandler", "serve_bundled_host", "serve_harness"]

_SOURCE = REPO / "tests" / "support" / "harness"


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves a folder without logging each request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_bundled_host(
    source: Path, pages: tuple[str, ...], folder: Path, handler: type[QuietHandler], name: str
) -> Generator[int]:
    """Copy `pages` from `source` into `folder`, bundle its host.js there and serve the folder with `handler` on a
    free loopback port (yielded) until the block ends."""
    for page in pages:
        shutil.copy(source / page, folder / page)
    bundled = run_npm_bin(
        "esbuild",
        [
            str(source / "host.js"),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            f"--outfile={folder / 'host.bundle.js'}",
        ],
        timeout=60,
    )
    if bundled.returncode != 0:
        raise RuntimeError(f"esbuild could not bundle the {name}:\n{bundled.output}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True, name=name)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@contextlib.contextmanager
def serve_harness(folder: Path) -> Generator[str]:
    """Bundle the harness into `folder`, serve it on a free loopback port; yields the host page's URL."""
    with serve_bundled_host(_SOURCE, ("host.html",), folder, QuietHandler, "harness host") as port:
        yield f"http://127.0.0.1:{port}/host.html"
