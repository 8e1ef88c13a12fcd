"""A test app for `--app tests.support.security_app:build`: the plain test app plus counters of what ran.

Tool `count` increments a counter; page `/counted` counts its renders; `GET /_test/counts` reports both and the
number of NiceGUI socket connects, so tests can show that a refused request ran nothing. The counter app
(`/counter`, tool `counter`) gives the embedded-mode cases a view to open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types
from nicegui import app, ui

from tests.support import apps
from tests.support.test_app import CounterView
from webapp.bridge.app_tools import install_apps
from webapp.core.context import CallContext
from webapp.server.composition import WebApp

__all__ = ["COUNTS_PATH", "build"]

COUNTS_PATH = "/_test/counts"


@dataclass
class Counts:
    tool: int = 0
    page: int = 0
    connects: int = 0


def build(webapp: WebApp) -> None:
    """The plain test app (`tests.support.apps`) plus the `count` tool, the `/counted` page and the counts route."""
    apps.build(webapp)
    counts = Counts()

    async def count(args: dict[str, Any], ctx: CallContext | None) -> mcp_types.CallToolResult:
        counts.tool += 1
        principal = ctx.caller.principal if ctx is not None else None
        return apps.structured({"count": counts.tool, "principal": principal})

    webapp.add_tool(apps.FunctionTool("count", "Counts its calls.", count))
    install_apps(webapp, CounterView)

    @ui.page("/counted")
    def counted() -> None:
        counts.page += 1
        ui.label(f"render {counts.page}")

    def connected() -> None:
        counts.connects += 1

    app.on_connect(connected)

    @app.get(COUNTS_PATH)
    def report() -> dict[str, int]:
        return {"tool": counts.tool, "page": counts.page, "connects": counts.connects}
