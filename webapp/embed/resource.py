"""The `ui://{app}/view` resources (apps.md §13): one static shell per app, with its content security policy in the
MCP Apps form (`_meta.ui.csp`) and in ChatGPT's (`openai/widgetCSP`), on the listing and on the read content.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

import mcp_types
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, ResourceCsp

from webapp.apps.definition import AppDefinition
from webapp.bridge.app_tools import VIEW_META
from webapp.embed.page import BOOT_PATH

__all__ = ["HELLO_TIMEOUT_MS", "ShellResources", "public_origin", "shell_csp"]

HELLO_TIMEOUT_MS = 8000
"""How long the shell waits for the view page's hello before it offers to open the view outside the host."""
_LOADED_GRACE_MS = 1000
_TUNNEL_WAIT_MS = 5000  # a tunnel's first call unanswered this long (an approval prompt, say): the card
"""How long after the nested frame loaded without a hello the shell boots the page itself (the frame showed an error,
e.g. a refused request)."""
_SHELL = files("webapp.embed").joinpath("shell.html").read_text(encoding="utf-8")


def public_origin(base_url: str) -> str:
    """`scheme://host[:port]` of the URL views are served under."""
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}"


def shell_csp(origin: str) -> ResourceCsp:
    """The shell frames the view page, which loads its assets and opens its socket on `origin` (ws or wss)."""
    socket = ("wss://" if origin.startswith("https://") else "ws://") + origin.split("://", 1)[1]
    return ResourceCsp(connect_domains=[origin, socket], resource_domains=[origin], frame_domains=[origin])


def _widget_csp(csp: ResourceCsp) -> dict[str, list[str]]:
    return {
        "connect_domains": csp.connect_domains or [],
        "resource_domains": csp.resource_domains or [],
        "frame_domains": csp.frame_domains or [],
    }


class ShellResources:
    """A `ResourceSource` for the server: lists and reads the shells of `apps` (the origin is read per request, since
    the serving port is known only once the socket is bound)."""

    extensions: Mapping[str, dict[str, Any]] = {EXTENSION_ID: {"mimeTypes": [APP_MIME_TYPE]}}

    def __init__(
        self, apps: Callable[[], Sequence[AppDefinition]], base_url: Callable[[], str], *, domain: str | None
    ) -> None:
        self._apps = apps
        self._base_url = base_url
        self._domain = domain

    def _meta(self) -> dict[str, Any]:
        csp = shell_csp(public_origin(self._base_url()))
        ui: dict[str, Any] = {"csp": csp.model_dump(by_alias=True, exclude_none=True), "prefersBorder": False}
        if self._domain is not None:
            ui["domain"] = self._domain
        return {"ui": ui, "openai/widgetCSP": _widget_csp(csp), "openai/widgetPrefersBorder": False}

    def resources(self) -> Sequence[mcp_types.Resource]:
        meta = self._meta()
        return [
            mcp_types.Resource(
                uri=app.resource_uri,
                name=f"{app.name} view",
                title=f"The live {app.name} view",
                description=app.description,
                mime_type=APP_MIME_TYPE,
                _meta=meta,
            )
            for app in self._apps()
        ]

    def read(self, uri: str) -> mcp_types.ReadResourceResult | None:
        app = next((app for app in self._apps() if app.resource_uri == uri), None)
        if app is None:
            return None
        content = mcp_types.TextResourceContents(
            uri=uri, mime_type=APP_MIME_TYPE, text=self.shell(app), _meta=self._meta()
        )
        return mcp_types.ReadResourceResult(contents=[content])

    def shell(self, app: AppDefinition) -> str:
        """The shell page of `app`: the static file with its settings as JSON (the view's origin and route)."""
        config = {
            "app": app.name,
            "title": f"The live {app.name} view",
            "version": "1",
            "origin": public_origin(self._base_url()),
            "route": urlsplit(self._base_url()).path.rstrip("/") + app.route,
            "bootPath": urlsplit(self._base_url()).path.rstrip("/") + BOOT_PATH,
            "metaKey": VIEW_META,
            "helloTimeoutMs": HELLO_TIMEOUT_MS,
            "loadedGraceMs": _LOADED_GRACE_MS,
            "tunnelWaitMs": _TUNNEL_WAIT_MS,
        }
        text = json.dumps(config).replace("<", "\\u003c")  # never closes the script element
        return _SHELL.replace("__CONFIG__", text)
