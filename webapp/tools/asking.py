"""Asking a call's MCP client (elicitation, sampling, roots), round by round: a question its client has not answered
raises `InputRequired`; the server answers that round and runs the call again from the start with the answers
(`webapp.server.asking`). This round's answers and those of earlier rounds (the request state) answer by key."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import mcp_types
from mcp.server.elicitation import (
    AcceptedElicitation,
    AcceptedUrlElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    render_elicitation_schema,
)
from mcp.server.mcpserver import Elicit, ListRoots, Sample
from pydantic import TypeAdapter, ValidationError

from webapp.core.context import NO_CLIENT, ClientChannel, InputRequired, MissingCapability, required_capabilities

__all__ = ["MAX_ROUNDS", "Asking", "ElicitUrl", "asked_reply", "channel_of", "raise_asked"]

MAX_ROUNDS: Final = 8
"""Rounds one call may ask in; a call that asks more is refused (a loop of questions is a bug)."""
_STATE_VERSION: Final = 1
_REQUEST: Final = TypeAdapter[mcp_types.InputRequest](mcp_types.InputRequest)


@dataclass(frozen=True, slots=True)
class ElicitUrl:
    """A URL-mode elicitation for `ctx.ask(...)`: the person is sent to `url`."""

    message: str
    url: str


def asked_reply(asked: InputRequired | MissingCapability) -> dict[str, Any]:
    """How a worker answers a forwarded call that asks its client (the calling worker raises it again with
    `raise_asked`, and its MCP request answers it)."""
    if isinstance(asked, MissingCapability):
        return {"missing_capability": {"required": asked.required, "message": str(asked)}}
    requests = {key: request.model_dump(mode="json", by_alias=True, exclude_none=True)
                for key, request in asked.requests.items()}  # fmt: skip
    return {"input_required": {"requests": requests, "state": asked.state, "rounds": asked.rounds}}


def raise_asked(reply: Mapping[str, Any]) -> None:
    """Raise what `asked_reply` carried, if anything."""
    if isinstance(missing := reply.get("missing_capability"), dict):
        raise MissingCapability(missing.get("required") or {}, missing.get("message"))
    if isinstance(asked := reply.get("input_required"), dict):
        requests = {key: _REQUEST.validate_python(request) for key, request in (asked.get("requests") or {}).items()}
        raise InputRequired(requests, str(asked.get("state") or ""), int(asked.get("rounds") or MAX_ROUNDS + 1))


def channel_of(carried: Any) -> ClientChannel:
    """The client channel a forwarded call carries (`Asking.carried`), else `NO_CLIENT`."""
    return Asking.from_carried(carried) if isinstance(carried, dict) else NO_CLIENT


class Asking:
    """The client channel of one round of one call (`webapp.core.context.ClientChannel`): the client's
    capabilities, this round's answers (`inputResponses`, as JSON) and the plaintext request state of the rounds
    before (`None` on the first). `modern`: the 2026-07-28 wire (URL elicitations carry no id there)."""

    def __init__(
        self,
        capabilities: mcp_types.ClientCapabilities | None,
        answers: Mapping[str, Any] | None = None,
        state: str | None = None,
        *,
        modern: bool = True,
    ) -> None:
        self.capabilities = capabilities
        self.answers = dict(answers or {})
        self.state = state
        self.modern = modern
        decoded = _decode(state)
        self._recorded: dict[str, dict[str, Any]] = decoded["answers"]
        self._asked: dict[str, str] = decoded["asked"]
        self.rounds: int = decoded["n"]

    # -- forwarding ----------------------------------------------------------------------------------------------
    def carried(self) -> dict[str, Any]:
        """This channel as JSON, for the worker a call is forwarded to (`from_carried` there)."""
        caps = (
            self.capabilities.model_dump(mode="json", by_alias=True, exclude_none=True) if self.capabilities else None
        )
        return {"caps": caps, "answers": self.answers, "state": self.state, "modern": self.modern}

    @classmethod
    def from_carried(cls, carried: Mapping[str, Any]) -> Asking:
        caps = carried.get("caps")
        capabilities = mcp_types.ClientCapabilities.model_validate(caps) if isinstance(caps, dict) else None
        state = carried.get("state")
        return cls(capabilities, carried.get("answers") or {}, state if isinstance(state, str) else None,
                   modern=bool(carried.get("modern", True)))  # fmt: skip

    # -- ClientChannel -------------------------------------------------------------------------------------------
    def supports(self, required: Mapping[str, Any]) -> bool:
        caps = self.capabilities
        if not required:
            return True
        if caps is None:
            return False
        if "sampling" in required and caps.sampling is None:
            return False
        if "roots" in required and caps.roots is None:
            return False
        modes: Mapping[str, Any] = required.get("elicitation") or {}
        if "elicitation" in required:
            elicitation = caps.elicitation
            if elicitation is None:
                return False
            if "form" in modes and elicitation.form is None and elicitation.url is not None:
                return False  # a bare `elicitation: {}` (the shape before modes) means form mode
            if "url" in modes and elicitation.url is None:
                return False
        return True

    async def ask(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        outcomes: dict[str, Any] = {}
        pending: dict[str, mcp_types.InputRequest] = {}
        asked: dict[str, str] = {}
        missing: dict[str, Any] = {}
        for key, marker in requests.items():
            request, required = self._render(marker)
            question = _digest(request)
            outcome = self._known(key, marker, question)
            if outcome is not None:
                outcomes[key] = outcome
                continue
            pending[key], asked[key] = request, question
            if not self.supports(required):
                for name, value in required.items():
                    missing[name] = {**missing.get(name, {}), **value}
        if missing:
            raise MissingCapability(missing, f"This call asks its client for what it did not declare: {missing}.")
        if pending:
            state = {"v": _STATE_VERSION, "n": self.rounds + 1, "answers": self._recorded, "asked": asked}
            raise InputRequired(pending, json.dumps(state, separators=(",", ":")), self.rounds + 1)
        return outcomes

    async def elicit(self, message: str, schema: type[Any], key: str | None) -> Any:
        return await self._one(key, Elicit(message, schema))

    async def elicit_url(self, message: str, url: str, key: str | None) -> Any:
        return await self._one(key, ElicitUrl(message, url))

    async def sample(self, messages: Any, max_tokens: int, key: str | None, options: Mapping[str, Any]) -> Any:
        if isinstance(messages, str):
            text = mcp_types.TextContent(type="text", text=messages)
            messages = [mcp_types.SamplingMessage(role="user", content=text)]
        return await self._one(key, Sample(list(messages), max_tokens=max_tokens, **options))

    async def list_roots(self, key: str | None) -> Any:
        return await self._one(key, ListRoots())

    # -- inside --------------------------------------------------------------------------------------------------
    async def _one(self, key: str | None, marker: Any) -> Any:
        key = key or "ask-" + _digest(self._render(marker)[0])[:12]
        return (await self.ask({key: marker}))[key]

    def _render(self, marker: Any) -> tuple[mcp_types.InputRequest, dict[str, Any]]:
        """The wire request a marker asks, and the capabilities it needs."""
        if isinstance(marker, Elicit):
            schema = render_elicitation_schema(marker.schema)  # pyright: ignore[reportUnknownMemberType]
            params = mcp_types.ElicitRequestFormParams(message=marker.message, requested_schema=schema)
            return mcp_types.ElicitRequest(params=params), required_capabilities(elicitation=True)
        if isinstance(marker, ElicitUrl):
            # an id is required on the 2025 wire and gone from the 2026 one: stable across rounds, from the question
            named = None if self.modern else "webapp-" + _digest_text(f"{marker.message}\n{marker.url}")
            url = mcp_types.ElicitRequestURLParams(message=marker.message, url=marker.url, elicitation_id=named)
            return mcp_types.ElicitRequest(params=url), required_capabilities(elicitation_url=True)
        if isinstance(marker, Sample):
            return mcp_types.CreateMessageRequest(params=marker.params), required_capabilities(sampling=True)
        if isinstance(marker, ListRoots):
            return mcp_types.ListRootsRequest(), required_capabilities(roots=True)
        raise TypeError(
            f"ctx.ask takes Elicit, Sample or ListRoots (mcp.server.mcpserver) or webapp ElicitUrl, got {marker!r}."
        )

    def _known(self, key: str, marker: Any, question: str) -> Any | None:
        """The answer to `key` when the client gave one to this very question (this round, or recorded before);
        None asks (again): no answer, an answer to another question, or one that does not fit."""
        entry = self._recorded.get(key)
        if entry is not None and entry.get("q") == question:
            outcome = _parse(marker, entry.get("a"))
            if outcome is not None:
                return outcome
        answer = self.answers.get(key)
        if answer is None or self._asked.get(key, question) != question:
            return None
        outcome = _parse(marker, answer)
        if outcome is not None:
            self._recorded[key] = {"q": question, "a": answer}
        return outcome


def _parse(marker: Any, wire: Any) -> Any | None:
    """A client's answer (JSON) as what `ctx.elicit`/`sample`/`list_roots` return; None when it does not fit."""
    try:
        if isinstance(marker, Elicit | ElicitUrl):
            result = mcp_types.ElicitResult.model_validate(wire)
            if result.action == "decline":
                return DeclinedElicitation()
            if result.action == "cancel":
                return CancelledElicitation()
            if isinstance(marker, ElicitUrl):
                return AcceptedUrlElicitation()
            if result.content is None:
                return None
            return AcceptedElicitation(data=marker.schema.model_validate(result.content))
        if isinstance(marker, Sample):
            tools = marker.params.tools is not None or marker.params.tool_choice is not None
            kind = mcp_types.CreateMessageResultWithTools if tools else mcp_types.CreateMessageResult
            return kind.model_validate(wire)
        return mcp_types.ListRootsResult.model_validate(wire)
    except ValidationError:
        return None


def _digest(request: mcp_types.InputRequest) -> str:
    """The question a request asks, as a short digest: an answer counts only for the question it answered."""
    params = request.params.model_dump(mode="json", by_alias=True, exclude_none=True) if request.params else None
    return _digest_text(json.dumps(params, sort_keys=True, separators=(",", ":")))


def _digest_text(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()[:12]).decode().rstrip("=")


def _decode(state: str | None) -> dict[str, Any]:
    """The request state's answers so far (the server unsealed it: anything unreadable is a fresh start)."""
    empty: dict[str, Any] = {"answers": {}, "asked": {}, "n": 0}
    if not state:
        return empty
    try:
        decoded = json.loads(state)
    except ValueError:
        return empty
    if not isinstance(decoded, dict) or decoded.get("v") != _STATE_VERSION:
        return empty
    answers, asked, rounds = decoded.get("answers"), decoded.get("asked"), decoded.get("n")
    return {
        "answers": answers if isinstance(answers, dict) else {},
        "asked": asked if isinstance(asked, dict) else {},
        "n": rounds if isinstance(rounds, int) else 0,
    }
