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

__all__ = ["serve_harness"]

_SOURCE = REPO / "tests" / "support" / "harness"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve_harness(folder: Path) -> Generator[str]:
    """Bundle the harness into `folder`, serve it on a free loopback port; yields the host page's URL."""
    shutil.copy(_SOURCE / "host.html", folder / "host.html")
    bundled = run_npm_bin(
        "esbuild",
        [
            str(_SOURCE / "host.js"),
            "--bundle",
            "--format=iife",
            "--platform=browser",
            f"--outfile={folder / 'host.bundle.js'}",
        ],
        timeout=60,
    )
    if bundled.returncode != 0:
        raise RuntimeError(f"esbuild could not bundle the harness host:\n{bundled.output}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True, name="harness-host")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/host.html"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
