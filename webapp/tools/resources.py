"""Resources and resource templates an author declares (`resources/list`, `resources/templates/list`,
`resources/read`): a URI, or an RFC 6570 template whose variables the function takes, and a function that reads it."""

from __future__ import annotations

import base64
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import mcp_types
from mcp.server import CacheHint
from mcp.server.caching import apply_cache_hint
from mcp.shared.uri_template import UriTemplate

from webapp.tools.action import Handler, declares
from webapp.tools.prompts import Completer

__all__ = ["Listing", "Resource", "ResourceNotFound", "ResourceRegistry"]

Listing = Callable[[Any], Awaitable[Sequence[mcp_types.Resource]]]
"""`await listing(ctx)`: the resources of a template that the caller of `resources/list` may see."""


class ResourceNotFound(LookupError):
    """Raise it from a resource function: the URI names nothing (an invalid-params error carrying the URI)."""


class Resource:
    """A resource at `uri`, or a template when `uri` has `{variables}`: `handler(*, ctx=None, **variables)` (sync or
    async) returns text, bytes (sent base64), any other JSON-able value (sent as JSON text), or a whole
    `ReadResourceResult`. `cache`: the 2026 caching hint of its reads; `complete`: completers of its variables;
    `listing(ctx)`: a template's resources the caller may see, for `resources/list`."""

    def __init__(
        self,
        uri: str,
        *,
        name: str,
        description: str,
        handler: Handler,
        title: str | None = None,
        mime_type: str | None = None,
        icons: Sequence[mcp_types.Icon] | None = None,
        cache: CacheHint | None = None,
        complete: Mapping[str, Completer] | None = None,
        listing: Listing | None = None,
    ) -> None:
        self.uri = uri
        self.template = UriTemplate.parse(uri) if UriTemplate.is_template(uri) else None
        variables = set(self.template.variable_names) if self.template is not None else set[str]()
        if set(complete or {}) - variables:
            raise ValueError(
                f"Resource {uri!r} completes {sorted(set(complete or {}) - variables)}: not its variables."
            )
        self.name = name
        self.description = description
        self.handler = handler
        self.title = title
        self.mime_type = mime_type
        self.icons = list(icons) if icons else None
        self.cache = cache
        self.completers = dict(complete or {})
        self.listing = listing
        self._wants_ctx = declares(handler, "ctx")

    def as_resource(self) -> mcp_types.Resource:
        return mcp_types.Resource(uri=self.uri, **self._listing())

    def as_template(self) -> mcp_types.ResourceTemplate:
        return mcp_types.ResourceTemplate(uri_template=self.uri, **self._listing())

    def _listing(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "description": self.description,
            "mime_type": self.mime_type, "icons": self.icons,
        }  # fmt: skip

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables of `uri` when this resource reads it, else None."""
        if self.template is None:
            return {} if uri == self.uri else None
        return self.template.match(uri)

    async def read(self, uri: str, variables: Mapping[str, Any], ctx: Any) -> mcp_types.ReadResourceResult:
        kwargs: dict[str, Any] = dict(variables) | ({"ctx": ctx} if self._wants_ctx else {})
        value = self.handler(**kwargs)
        value = await value if inspect.isawaitable(value) else value
        if not isinstance(value, mcp_types.ReadResourceResult):
            value = mcp_types.ReadResourceResult(contents=[self._contents(uri, value)])
        return value if self.cache is None else apply_cache_hint(value, self.cache)

    def _contents(self, uri: str, value: Any) -> mcp_types.TextResourceContents | mcp_types.BlobResourceContents:
        if isinstance(value, bytes):
            blob = base64.b64encode(value).decode("ascii")
            return mcp_types.BlobResourceContents(uri=uri, mime_type=self.mime_type, blob=blob)
        if isinstance(value, str):
            return mcp_types.TextResourceContents(uri=uri, mime_type=self.mime_type, text=value)
        text = json.dumps(value, ensure_ascii=False)
        return mcp_types.TextResourceContents(uri=uri, mime_type=self.mime_type or "application/json", text=text)


class ResourceRegistry:
    """The resources and templates of one server, by unique URI (a static URI is matched before the templates)."""

    def __init__(self) -> None:
        self._resources: dict[str, Resource] = {}

    def add(self, resource: Resource) -> Resource:
        if resource.uri in self._resources:
            raise ValueError(f"A resource at {resource.uri!r} is already registered.")
        self._resources[resource.uri] = resource
        return resource

    async def resources(self, ctx: Any) -> list[mcp_types.Resource]:
        """The static resources, then those the templates list for the caller."""
        listed = [resource.as_resource() for resource in self._resources.values() if resource.template is None]
        for resource in self._resources.values():
            if resource.listing is not None:
                listed += await resource.listing(ctx)
        return listed

    def templates(self) -> list[mcp_types.ResourceTemplate]:
        return [resource.as_template() for resource in self._resources.values() if resource.template is not None]

    def find(self, uri: str) -> tuple[Resource, dict[str, Any]] | None:
        """The resource that reads `uri`, with its variables."""
        static = self._resources.get(uri)
        if static is not None and static.template is None:
            return static, {}
        for resource in self._resources.values():
            if resource.template is not None and (variables := resource.match(uri)) is not None:
                return resource, variables
        return None

    def by_template(self, template: str) -> Resource | None:
        found = self._resources.get(template)
        return found if found is not None and found.template is not None else None
