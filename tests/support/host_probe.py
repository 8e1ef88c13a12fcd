"""A test app for `--app tests.support.host_probe:build`: the `probe` view asks its host one thing per button and
shows the answer (or the `HostError`), so host tests can check every request of `view.host` against a real host.
It also has the plain tool `ping` for `call_tool` to reach.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from nicegui import ui

from webapp import Host, HostError, Tool, ViewContext, WebApp, install_apps, mcp_app

__all__ = ["REQUESTS", "ProbeView", "build"]

REQUESTS: Mapping[str, Callable[[Host], Awaitable[Any]]] = {
    "send_message": lambda host: host.send_message("Hello from the probe."),
    "update_model_context": lambda host: host.update_model_context("The probe is open."),
    "request_display_mode": lambda host: host.request_display_mode("fullscreen"),
    "call_tool": lambda host: host.call_tool("ping"),
}


@mcp_app(description="Shows what the host around it answers.", route="/probe")
class ProbeView:
    def __init__(self, view: ViewContext[None]) -> None:
        self.host = view.host
        ui.label("embedded" if view.embedded else "plain tab").props("data-testid=where")
        self.outcome = ui.label("").props("data-testid=outcome")
        if self.host is not None:
            ui.label(str(self.host.info.get("name", ""))).props("data-testid=host-name")
            result = self.host.tool_result or {}
            opened = (result.get("structuredContent") or {}).get("app")
            ui.label(f"opened by {opened or 'nothing'}").props("data-testid=tool-result")
            for name in REQUESTS:
                ui.button(name, on_click=functools.partial(self.ask, name)).props(f"data-testid={name}")

    async def ask(self, name: str) -> None:
        assert self.host is not None
        try:
            answer = await REQUESTS[name](self.host)
        except HostError as error:
            self.outcome.set_text(f"{name}: {error.code}: {error}")
            return
        self.outcome.set_text(f"{name}: ok: {answer}")


def build(webapp: WebApp) -> None:
    webapp.add_tool(Tool("ping", description="Answers pong.", handler=lambda: "pong"))
    install_apps(webapp, ProbeView)
