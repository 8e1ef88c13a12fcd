"""What an author declares beside tools: prompts, resources and templates; what the server keeps per session for
them (log levels, subscriptions); and the changes it tells their listeners of (`webapp.server.changes`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import mcp_types
from mcp.server import CacheHint
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
from pydantic import BaseModel

from webapp.events import AppEvents
from webapp.server.changes import ChangeBus
from webapp.server.client_logs import LogLevels
from webapp.server.subscriptions import Subscriptions
from webapp.tools.prompts import Completer, Prompt, PromptRegistry
from webapp.tools.resources import Resource, ResourceRegistry

__all__ = ["Declarations"]

F = TypeVar("F", bound=Callable[..., Any])


class Declarations:
    """The prompts and resources of a `WebApp`, with the decorators that declare them."""

    def __init__(self, events: AppEvents) -> None:
        self.events = events
        """The server's app events (publish/subscribe by topic), shared by its apps' stores and views."""
        self.prompts = PromptRegistry()
        """The prompts an author declared (`prompt`, `add_prompt`)."""
        self.resources = ResourceRegistry()
        """The resources and templates an author declared (`resource`)."""
        self.log_levels = LogLevels()
        """The log level of each 2025 session (`logging/setLevel`), for `ctx.log`."""
        self.subscriptions = Subscriptions()
        """Which 2025 sessions subscribed to which resource (`resources/subscribe`)."""
        self.changes = ChangeBus(events, self.subscriptions)
        """The changes told to the listen streams (2026) and the subscribed sessions (2025) of every worker."""

    def add_prompt(self, prompt: Prompt) -> Prompt:
        """Serve `prompt` (a `webapp.Prompt`)."""
        return self.prompts.add(prompt)

    def prompt(
        self,
        name: str | None = None,
        *,
        description: str,
        arguments: type[BaseModel] | None = None,
        title: str | None = None,
        icons: Sequence[mcp_types.Icon] | None = None,
        complete: Mapping[str, Completer] | None = None,
    ) -> Callable[[F], F]:
        """Decorate `fn(arguments, *, ctx=None)` (`arguments` only with `arguments=`) to serve it as a prompt named
        `name` (default: the function's name); see `webapp.Prompt`."""

        def register(fn: F) -> F:
            prompt = Prompt(name or fn.__name__, description=description, handler=fn, arguments=arguments,
                            title=title, icons=icons, complete=complete)  # fmt: skip
            self.add_prompt(prompt)
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        description: str,
        name: str | None = None,
        title: str | None = None,
        mime_type: str | None = None,
        icons: Sequence[mcp_types.Icon] | None = None,
        cache: CacheHint | None = None,
        complete: Mapping[str, Completer] | None = None,
    ) -> Callable[[F], F]:
        """Decorate `fn(*, ctx=None, **variables)` to serve it as the resource at `uri` (a template when `uri` has
        `{variables}`); see `webapp.Resource`."""

        def register(fn: F) -> F:
            resource = Resource(uri, name=name or fn.__name__, description=description, handler=fn, title=title,
                                mime_type=mime_type, icons=icons, cache=cache, complete=complete)  # fmt: skip
            self.resources.add(resource)
            return fn

        return register

    async def notify_resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to `uri` or listening for it, on any worker, that it changed (at most once a
        second: the changes within a second after the first are told as one when it is over)."""
        self.changes.resource_updated(uri)

    async def notify_tools_changed(self) -> None:
        """Tell the clients listening for it, on any worker, that the list of tools changed."""
        await self.changes.publish(ToolsListChanged())

    async def notify_prompts_changed(self) -> None:
        """Tell the clients listening for it, on any worker, that the list of prompts changed."""
        await self.changes.publish(PromptsListChanged())

    async def notify_resources_changed(self) -> None:
        """Tell the clients listening for it, on any worker, that the list of resources changed."""
        await self.changes.publish(ResourcesListChanged())
