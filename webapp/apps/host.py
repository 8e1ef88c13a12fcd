"""What a view may ask of the MCP Apps host it is shown in (SEP-1865): `ViewContext.host`, present only when embedded.

Every request is gated on what the host advertises and bounded in time; a refusal raises `HostError`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, Protocol

__all__ = ["DisplayMode", "Host", "HostError", "HostErrorCode", "HostEvent", "HostHandler"]

DisplayMode = Literal["inline", "fullscreen", "pip"]
HostEvent = Literal["tool_input", "tool_result", "context_changed", "teardown"]
HostHandler = Callable[[Mapping[str, Any]], Awaitable[None] | None]
HostErrorCode = Literal["NOT_SUPPORTED", "TIMEOUT", "HOST_ERROR", "GONE"]


class HostError(Exception):
    """A host request that did not succeed: `code` says why (the message is meant for people)."""

    def __init__(self, code: HostErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: HostErrorCode = code


class Host(Protocol):
    """The MCP Apps host around an embedded view.

    `info` is the host's `hostInfo` (`name`, `version`), `capabilities` its `hostCapabilities` and `context` its
    latest `hostContext` (theme, display mode, locale, ...). `on(event, handler)` calls `handler(params)` for each
    host event; the requests raise `HostError` (`NOT_SUPPORTED` when the host does not advertise the feature,
    `TIMEOUT` when it does not answer in time, `HOST_ERROR` when it refuses, `GONE` once the frame is torn down).
    """

    @property
    def info(self) -> Mapping[str, Any]: ...
    @property
    def capabilities(self) -> Mapping[str, Any]: ...
    @property
    def context(self) -> Mapping[str, Any]: ...
    @property
    def theme(self) -> Literal["light", "dark"]: ...
    @property
    def tool_input(self) -> Mapping[str, Any] | None:
        """The latest `ui/notifications/tool-input` of the frame (its `arguments`), if any came."""
        ...

    @property
    def tool_result(self) -> Mapping[str, Any] | None:
        """The latest tool result the host handed the frame (a `CallToolResult` as JSON), if any came."""
        ...

    async def ready(self) -> bool:
        """Wait (bounded) until the host has introduced itself; False if it did not. The framework awaits it before it
        builds the view, so `info`, `capabilities` and `context` are known in the view's constructor."""
        ...

    def supports(self, request: str) -> bool:
        """Whether the host advertises what `request` (`send_message`, `open_link`, ...) needs."""
        ...

    def on(self, event: HostEvent, handler: HostHandler) -> None:
        """Call `handler(params)` (sync or async) on each host `event`: tool input, tool result, context, teardown."""
        ...

    async def send_message(self, text: str) -> None:
        """Post `text` as a user message into the conversation (`ui/message`)."""
        ...

    async def update_model_context(self, text: str | None = None, structured: Mapping[str, Any] | None = None) -> None:
        """Replace what the model knows about this view (`ui/update-model-context`)."""
        ...

    async def open_link(self, url: str) -> None:
        """Ask the host to open `url` for the user (`ui/open-link`)."""
        ...

    async def request_display_mode(self, mode: DisplayMode) -> DisplayMode:
        """Ask for another display mode; returns the mode the host actually set."""
        ...

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """Call a tool of this server through the host (`tools/call`); returns the `CallToolResult` as JSON."""
        ...
