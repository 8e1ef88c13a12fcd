"""MCP Apps (SEP-1865): the `ui://` shell resources, the result widget, embedded mode of view pages, and host
interaction.

`install_embedding(server, bridge)` runs when apps are installed; it sits above the bridge and below the server.
"""

from __future__ import annotations

from typing import Protocol

from webapp.bridge.dispatch import Bridge
from webapp.core.security import NullOriginRule
from webapp.core.settings import Settings
from webapp.embed.host import PageHost
from webapp.embed.page import EmbeddedMode, NullOrigins
from webapp.embed.resource import ShellResources, public_origin, shell_csp
from webapp.embed.result import ResultWidget

__all__ = [
    "EmbeddedMode",
    "EmbeddingServer",
    "NullOrigins",
    "PageHost",
    "ResultWidget",
    "ShellResources",
    "install_embedding",
    "public_origin",
    "shell_csp",
]


class EmbeddingServer(Protocol):
    """What embedding needs of the server (`webapp.server.WebApp`)."""

    settings: Settings
    null_origin_rules: list[NullOriginRule]

    @property
    def base_url(self) -> str: ...
    def add_resources(self, source: ShellResources, /) -> None: ...


def install_embedding(server: EmbeddingServer, bridge: Bridge) -> None:
    """Serve the shells of the bridge's apps, let their pages run embedded, and admit those pages' `null` origin."""
    mode = EmbeddedMode(timeout=server.settings.call_timeout)
    bridge.tabs.embedder = mode
    server.add_resources(
        ShellResources(lambda: list(bridge.apps.values()), lambda: server.base_url, domain=server.settings.ui_domain)
    )

    def valid_page(path: str, key: str) -> bool:
        view = bridge.registry.by_attach_key(key)
        return view is not None and view.is_open and bridge.apps[view.app].route == path

    server.null_origin_rules.append(NullOrigins(mode.clients, valid_page))
