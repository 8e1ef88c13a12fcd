"""`/mcp` as an OAuth 2.1 resource server: the RFC 9728 metadata routes, the RFC 6750 challenges and the decision,
before anything runs, whether a request's token (an issuer's access token or a static `--token`) may make it.

`ResourceServer.authenticate` is the hook `webapp.core.auth.BearerAuth` calls: it answers a refused request itself
(401 or 403 with `WWW-Authenticate`) and otherwise admits it with its principal and session owner.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.routes import cors_middleware
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.authentication import AuthCredentials
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from webapp.auth.tokens import Rejected, TokenCheck
from webapp.core.auth import Admission, TokenTable, respond

__all__ = ["ResourceServer", "metadata_paths"]

log = logging.getLogger(__name__)
_WELL_KNOWN = "/.well-known/oauth-protected-resource"


def metadata_paths(resource: str) -> list[str]:
    """Where the metadata of `resource` is served: the path-inserted form (RFC 9728 §3.1), then the root form."""
    path = urlsplit(resource).path.rstrip("/")
    return [_WELL_KNOWN + path, _WELL_KNOWN] if path else [_WELL_KNOWN]


class ResourceServer:
    """The resource server of one canonical resource URL (`{public origin}/mcp`)."""

    def __init__(
        self,
        check: TokenCheck,
        static: TokenTable,
        *,
        scope: str,
        scopes_of: Callable[[str], Sequence[str]],
        all_scopes: Callable[[], Sequence[str]],
        max_body: int,
    ) -> None:
        self.check = check
        self.resource = check.resource
        self._static = static
        self._scope = scope
        self._scopes_of = scopes_of
        self._all_scopes = all_scopes
        self._max_body = max_body
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(self.resource))
        self.metadata_url = origin + metadata_paths(self.resource)[0]

    def metadata(self) -> ProtectedResourceMetadata:
        # validated from strings, so that the model keeps an issuer without a path as it is (no trailing slash)
        return ProtectedResourceMetadata.model_validate(
            {
                "resource": self.resource,
                "authorization_servers": [self.check.issuer.issuer],
                "scopes_supported": self.scopes_supported(),
                "bearer_methods_supported": ["header"],
                "resource_name": "webapp",
            }
        )

    def scopes_supported(self) -> list[str]:
        """Every scope a call may need: the one every call needs first, then the tools' own."""
        return list(dict.fromkeys([self._scope, *self._all_scopes()]))

    def needed(self, tools: Sequence[str]) -> list[str]:
        """The scopes a request calling `tools` needs: the one every call needs, then each tool's own."""
        return list(dict.fromkeys([self._scope, *(own for tool in tools for own in self._scopes_of(tool))]))

    def routes(self) -> list[Route]:
        """The metadata at the path-inserted and the root well-known URLs, both naming the canonical resource."""

        async def handle(request: Any) -> Any:
            return await ProtectedResourceMetadataHandler(self.metadata()).handle(request)

        endpoint = cors_middleware(handle, ["GET", "OPTIONS"])
        return [Route(path, endpoint=endpoint, methods=["GET", "OPTIONS"]) for path in metadata_paths(self.resource)]

    async def authenticate(
        self, scope: Scope, receive: Receive, send: Send, presented: bytes | None
    ) -> Admission | None:
        if "access_token" in parse_qs(scope.get("query_string", b"").decode("latin-1")):
            return await self._refuse(
                scope, receive, send, "a token in the query string is refused: send it in the Authorization header"
            )
        if presented is None:  # RFC 6750 §3: no credentials, no error attribute
            await self._challenge(scope, receive, send, 401, None, "Send an Authorization: Bearer <token> header.")
            return None
        static = self._static.principal(presented) if self._static else None
        if static is not None:
            return Admission(static, static, receive)
        checked = await self.check.check(presented.decode("latin-1"))
        if isinstance(checked, Rejected):
            return await self._refuse(scope, receive, send, checked.reason)
        tools, receive = await self._tools_of(scope, receive)
        needed = self.needed(tools)
        if not set(needed) <= checked.scopes:
            description = f"This call needs the scopes: {' '.join(needed)}."
            await self._challenge(scope, receive, send, 403, "insufficient_scope", description, needed)
            return None
        scope["user"] = AuthenticatedUser(checked.access_token)  # the SDK's session-owner check sees the same owner
        scope["auth"] = AuthCredentials(sorted(checked.scopes))
        return Admission(checked.principal, checked.owner, receive)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, reason: str) -> None:
        log.info("refused a bearer token: %s", reason)
        await self._challenge(scope, receive, send, 401, "invalid_token", f"The access token is not valid: {reason}")

    async def _challenge(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        error: str | None,
        description: str,
        scopes: Sequence[str] | None = None,
    ) -> None:
        described = description.replace("\\", "").replace('"', "'")
        parts = [f'error="{error}"', f'error_description="{described}"'] if error else []
        parts += [f'resource_metadata="{self.metadata_url}"', f'scope="{" ".join(scopes or [self._scope])}"']
        body = json.dumps({"error": error or "unauthorized", "error_description": description}).encode()
        challenge = ("Bearer " + ", ".join(parts)).encode("latin-1", "replace")
        await respond(scope, receive, send, status, body, [(b"www-authenticate", challenge)])

    async def _tools_of(self, scope: Scope, receive: Receive) -> tuple[list[str], Receive]:
        """The tools a request calls: the 2026-07-28 `Mcp-Method`/`Mcp-Name` headers, else the `tools/call`s in the
        JSON body (a request or a batch, read within the body limit and handed on unchanged)."""
        headers = {bytes(name).lower(): bytes(value) for name, value in scope.get("headers", ())}
        method = headers.get(b"mcp-method")
        if method is not None:
            name = headers.get(b"mcp-name")
            return ([name.decode("latin-1")] if method == b"tools/call" and name else []), receive
        if scope.get("method") != "POST" or scope["type"] != "http":
            return [], receive
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            size += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body") or size > self._max_body:
                break
        replay = _replay(messages, receive)
        if size > self._max_body:
            return [], replay  # the transport answers 413 on its own
        return _tools_in(b"".join(m.get("body", b"") for m in messages)), replay


def _tools_in(body: bytes) -> list[str]:
    try:
        document = json.loads(body)
    except ValueError:
        return []
    names: list[str] = []
    for request in document if isinstance(document, list) else [document]:
        if isinstance(request, dict) and request.get("method") == "tools/call":
            params = request.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str):
                names.append(name)
    return names


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed
