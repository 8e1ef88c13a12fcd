"""The server's side of asking a client (elicitation, sampling, roots) in both protocol eras: a call that asks runs
again from the start with the answers. On 2026-07-28 a round that asks is answered with an `InputRequiredResult`
whose request state (the answers so far) the SDK's `RequestStateBoundary` seals; in a 2025 session the server sends
the requests on the call's own stream and runs the call again once they are answered."""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar

import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.jsonrpc import INVALID_REQUEST, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from webapp.core.auth import PRINCIPAL_SCOPE_KEY
from webapp.core.context import ClientChannel, InputRequired, MissingCapability
from webapp.tools.asking import MAX_ROUNDS, Asking

__all__ = ["ASK_TIMEOUT", "answer_rounds", "missing_capability_error", "request_state_boundary"]

log = logging.getLogger(__name__)
Context = ServerRequestContext[Any, Any]
R = TypeVar("R")

ASK_TIMEOUT: Final = 600.0
"""Seconds a 2025 client may take to answer one question (a person fills a form): its own bound, not the call's."""


def request_state_boundary(key: str | bytes | None, audience: str) -> RequestStateBoundary:
    """The middleware sealing and checking the request state of multi-round calls: under `key` (every worker's,
    `--request-state-key`; a key of this process when None), bound to the caller's principal and to `audience`."""
    security = RequestStateSecurity(keys=[key or os.urandom(32)], bind_principal=_principal)
    return RequestStateBoundary(security, default_audience=audience)


def _principal(ctx: Context) -> str | None:
    scope: Mapping[str, Any] = getattr(ctx.request, "scope", None) or {}
    principal = scope.get(PRINCIPAL_SCOPE_KEY)
    return principal if isinstance(principal, str) else None


def missing_capability_error(missing: MissingCapability) -> MCPError:
    """-32021 with `data.requiredCapabilities` (HTTP 400 on the 2026 wire when nothing was sent before)."""
    required = mcp_types.ClientCapabilities.model_validate(missing.required)
    data = mcp_types.MissingRequiredClientCapabilityErrorData(required_capabilities=required)
    return MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        str(missing),
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


async def answer_rounds(
    ctx: Context, params: mcp_types.InputResponseRequestParams, run: Callable[[ClientChannel], Awaitable[R]]
) -> R | mcp_types.InputRequiredResult:
    """`run(client)` (a call, a prompt, a resource read) until it stops asking; a 2026 round that asks answers
    `InputRequiredResult`, a 2025 one asks the client now and runs again. A call that needs a capability the
    client lacks is refused with -32021."""
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    capabilities = ctx.session.client_capabilities
    answers: dict[str, Any] = {}
    state: str | None = None
    if modern:
        answers = {key: _wire(value) for key, value in (params.input_responses or {}).items()}
        state = params.request_state
    while True:
        try:
            return await run(Asking(capabilities, answers, state, modern=modern))
        except MissingCapability as missing:
            raise missing_capability_error(missing) from None
        except InputRequired as asked:
            if asked.rounds > MAX_ROUNDS:
                raise MCPError(INVALID_REQUEST, f"The call asked its client more than {MAX_ROUNDS} times.") from None
            if modern:
                return mcp_types.InputRequiredResult(input_requests=asked.requests, request_state=asked.state)
            answers, state = await _ask_now(ctx, asked.requests), asked.state


async def _ask_now(ctx: Context, requests: Mapping[str, mcp_types.InputRequest]) -> dict[str, Any]:
    """Send a 2025 session's client the requests on the call's own stream; their answers by key (one that does not
    fit the request is left out: it is asked again)."""
    if not ctx.session.can_send_request:
        raise MCPError(INVALID_REQUEST, "This connection cannot carry the server's questions to the client.")
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
    answers: dict[str, Any] = {}
    for key, request in requests.items():
        kind = _result_type(request)
        try:
            result = await ctx.session.send_request(request, kind, ASK_TIMEOUT, metadata)
        except ValidationError:
            log.info("the client's answer to %r does not fit the question; asking again", key)
            continue
        answers[key] = _wire(result)
    return answers


def _result_type(request: mcp_types.InputRequest) -> type[mcp_types.Result]:
    if isinstance(request, mcp_types.ElicitRequest):
        return mcp_types.ElicitResult
    if isinstance(request, mcp_types.ListRootsRequest):
        return mcp_types.ListRootsResult
    tools = request.params.tools is not None or request.params.tool_choice is not None
    return mcp_types.CreateMessageResultWithTools if tools else mcp_types.CreateMessageResult


def _wire(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else value
