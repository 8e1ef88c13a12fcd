"""The context handed to every tool call: who calls, over which protocol, how to report progress, and how to ask
the calling client (elicitation, sampling, roots).

A leaf module: it imports neither NiceGUI nor MCP, so every layer can depend on it (the server layer sets the client
channel, `webapp.tools.asking`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "NO_CLIENT",
    "STDIO",
    "CallContext",
    "Caller",
    "ClientChannel",
    "InputRequired",
    "LogSender",
    "MissingCapability",
    "Outcome",
    "ProgressReporter",
    "no_log",
    "no_progress",
]

STDIO = "stdio"
"""Protocol name and session id of callers on the stdio transport."""

ProgressReporter = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""`await report_progress(progress, total, message)`: sends MCP progress when the caller asked for it."""


async def no_progress(progress: float, total: float | None = None, message: str | None = None) -> None:
    """A progress reporter that reports nothing (for calls made outside MCP, e.g. in tests)."""


LogSender = Callable[[str, Any, "str | None"], Awaitable[None]]
"""`await send_log(level, data, logger)`: sends the caller an MCP log message when its level lets it through."""


async def no_log(level: str, data: Any, logger: str | None = None) -> None:
    """A log sender that sends nothing (calls made outside MCP)."""


class InputRequired(Exception):
    """Control flow, not an error: the call needs answers from its client (`requests`: key → the SDK's input request)
    before it can go on. The server answers it (2026: an `InputRequiredResult`; 2025: it sends the requests and runs
    the call again with the answers); `state` carries the answers so far (plaintext JSON, sealed by the server).

    Every `except Exception` around a handler lets it through; so should an author's."""

    def __init__(self, requests: Mapping[str, Any], state: str, rounds: int) -> None:
        super().__init__(f"the call asks its client for {', '.join(requests)}")
        self.requests = dict(requests)
        self.state = state
        self.rounds = rounds


class MissingCapability(Exception):
    """The call needs a client capability the client did not declare: the server answers JSON-RPC -32021 with
    `data.requiredCapabilities` (`required`, e.g. `{"sampling": {}}`), before anything else is sent."""

    def __init__(self, required: Mapping[str, Any], message: str | None = None) -> None:
        self.required = dict(required)
        super().__init__(message or f"This call needs the client capabilities {sorted(self.required)}.")


def required_capabilities(
    *, elicitation: bool = False, elicitation_url: bool = False, sampling: bool = False, roots: bool = False
) -> dict[str, Any]:
    """The `ClientCapabilities` (as JSON) that the flags name."""
    required: dict[str, Any] = {}
    modes = {mode: {} for mode, wanted in (("form", elicitation), ("url", elicitation_url)) if wanted}
    if modes:
        required["elicitation"] = modes
    if sampling:
        required["sampling"] = {}
    if roots:
        required["roots"] = {}
    return required


class ClientChannel(Protocol):
    """How a call asks its MCP client (set by the server layer: `webapp.tools.asking.Asking`); `CallContext`'s
    `elicit`, `sample`, `list_roots` and `ask` go through it."""

    def supports(self, required: Mapping[str, Any]) -> bool:
        """Whether the client declared every capability in `required` (see `required_capabilities`)."""
        ...

    async def ask(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to each request (key → `Elicit`, `Sample`, `ListRoots` of `mcp.server.mcpserver`, or a URL
        elicitation), or `InputRequired` for those not answered yet."""
        ...

    async def elicit(self, message: str, schema: type[Any], key: str | None) -> Any: ...
    async def elicit_url(self, message: str, url: str, key: str | None) -> Any: ...
    async def sample(self, messages: Any, max_tokens: int, key: str | None, options: Mapping[str, Any]) -> Any: ...
    async def list_roots(self, key: str | None) -> Any: ...


class _NoClient:
    """A call made outside MCP (the viewer's try panel, tests): it supports nothing, so asking is refused."""

    def supports(self, required: Mapping[str, Any]) -> bool:
        return not required

    def _refuse(self, required: dict[str, Any]) -> MissingCapability:
        return MissingCapability(required, "This call was made without an MCP client to ask.")

    async def ask(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        if not requests:
            return {}
        raise self._refuse({"elicitation": {}})

    async def elicit(self, message: str, schema: type[Any], key: str | None) -> Any:
        raise self._refuse(required_capabilities(elicitation=True))

    async def elicit_url(self, message: str, url: str, key: str | None) -> Any:
        raise self._refuse(required_capabilities(elicitation_url=True))

    async def sample(self, messages: Any, max_tokens: int, key: str | None, options: Mapping[str, Any]) -> Any:
        raise self._refuse(required_capabilities(sampling=True))

    async def list_roots(self, key: str | None) -> Any:
        raise self._refuse(required_capabilities(roots=True))


NO_CLIENT: ClientChannel = _NoClient()
"""The client channel of a call made outside MCP: it supports nothing."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling.

    `principal` is the authenticated principal (None while auth is off); `session_id` the legacy
    `Mcp-Session-Id` (the constant `"stdio"` on stdio, None for sessionless 2026-07-28 callers);
    `protocol` the negotiated protocol version (`"2025-11-25"`, `"2026-07-28"`, ...) or `"stdio"`; `apps` whether
    the client negotiated the MCP Apps extension (it can show views inline).
    """

    principal: str | None
    session_id: str | None
    protocol: str
    apps: bool = False

    @property
    def is_sessionless(self) -> bool:
        return self.session_id is None


class Outcome(Protocol):
    """A call with a `_call_id` (`ctx.outcome`): the framework keeps its result under (principal, tool, call id), so a
    retry gets that result instead of acting again. A handler that writes to the app's database calls `store` inside
    its write transaction, with the value it is about to return: the outcome then commits (or rolls back) with the
    change. Storing fails (and so rolls the transaction back) when a retry took the call over meanwhile."""

    def store(self, db: Any, value: object) -> None:
        """Keep `value` (the handler's return value) as this call's outcome, on `db` (the app's `Database`, inside
        the handler's transaction)."""
        ...


@dataclass(frozen=True, slots=True)
class CallContext:
    """One tool call: the caller, the tool name, progress reporting, the base URL for view links, and the
    caller's `_call_id` (action tools only, None when not sent): repeats of one call carry the same id.

    With several workers: `arguments` are the call's arguments as sent (a worker forwards them to the worker
    holding the view), and `target` is set on a forwarded call: the digest of the view it must reach, with `claim`,
    the claim on its `_call_id` the forwarding worker holds.

    `outcome` is set on calls of action tools that carry a `_call_id` (see `Outcome`); `present`, set by the tools
    layer, turns the handler's value into the call's result as the tool would (a bridge applies it while the view's
    tab applies the call's change, and the tool passes the result on unchanged).

    `client`, set by the server, is how the call asks its MCP client (`elicit`, `elicit_url`, `sample`, `list_roots`,
    `ask`); a call that asks runs again from the start once its client answered, so ask before any side effect. The
    same context reaches prompt and resource functions (`tool` is then the prompt's name or the resource's URI)."""

    caller: Caller
    tool: str
    report_progress: ProgressReporter = field(default=no_progress, compare=False, repr=False)
    base_url: str = ""
    call_id: str | None = None
    arguments: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    target: str | None = None
    claim: str | None = None
    outcome: Outcome | None = field(default=None, compare=False, repr=False)
    present: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    send_log: LogSender = field(default=no_log, compare=False, repr=False)
    client: ClientChannel = field(default=NO_CLIENT, compare=False, repr=False)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send the caller a log message: `level` is one of MCP's (`debug`, `info`, `notice`, `warning`, `error`,
        `critical`, `alert`, `emergency`), `data` any JSON-able value. It goes out when the caller asked for that
        level (`logging/setLevel` in a 2025 session, the request's log level in 2026); never the server's own logs."""
        await self.send_log(level, data, logger)

    # -- asking the client (elicitation, sampling, roots) -----------------------------------------------------------
    # In 2026 a call that asks is answered "input required" and runs again from the start with the answers; a 2025
    # call runs again too, once the server had its answers. So ask before any side effect, and let `InputRequired`
    # through any `except Exception` of your own.

    def supports(
        self, *, elicitation: bool = False, elicitation_url: bool = False, sampling: bool = False, roots: bool = False
    ) -> bool:
        """Whether the client declared what the flags name: `elicitation` (form mode), `elicitation_url` (URL
        mode), `sampling`, `roots`. A call made outside MCP supports nothing."""
        return self.client.supports(required_capabilities(
            elicitation=elicitation, elicitation_url=elicitation_url, sampling=sampling, roots=roots
        ))  # fmt: skip

    def require(
        self, *, elicitation: bool = False, elicitation_url: bool = False, sampling: bool = False, roots: bool = False
    ) -> None:
        """Refuse the call unless the client declared what the flags name (see `supports`): the client gets the
        JSON-RPC error -32021 with `data.requiredCapabilities`. Call it before the call reports anything."""
        required = required_capabilities(
            elicitation=elicitation, elicitation_url=elicitation_url, sampling=sampling, roots=roots
        )
        if not self.client.supports(required):
            names = ", ".join(name for name, on in (("elicitation", elicitation), ("elicitation (URL mode)",
                              elicitation_url), ("sampling", sampling), ("roots", roots)) if on)  # fmt: skip
            raise MissingCapability(required, f"The tool {self.tool!r} needs the client capability {names}.")

    async def elicit(self, message: str, schema: type[Any], *, key: str | None = None) -> Any:
        """Ask the person for the fields of `schema` (a pydantic model of flat fields: strings, numbers, booleans,
        enums as `Literal[...]` or `json_schema_extra` `oneOf`/`enum`+`enumNames`, multi-selects as lists; field
        defaults are sent as defaults) in form mode. Returns `mcp.server.mcpserver.AcceptedElicitation` (its `data`
        a `schema` instance), `DeclinedElicitation` or `CancelledElicitation`. `key` names the question on the wire
        (default: derived from it). Without the elicitation capability: -32021."""
        return await self.client.elicit(message, schema, key)

    async def elicit_url(self, message: str, url: str, *, key: str | None = None) -> Any:
        """Ask the person to visit `url` (URL mode: credentials, payments, sign-in elsewhere). Returns
        `mcp.server.elicitation.AcceptedUrlElicitation`, `DeclinedElicitation` or `CancelledElicitation`."""
        return await self.client.elicit_url(message, url, key)

    async def sample(self, messages: Any, *, max_tokens: int, key: str | None = None, **options: Any) -> Any:
        """Ask the client's model: `messages` is a text (one user message) or a list of `mcp_types.SamplingMessage`;
        `options` are those of `mcp.server.mcpserver.Sample` (`system_prompt`, `temperature`, ...). Returns an
        `mcp_types.CreateMessageResult`. Without the sampling capability: -32021."""
        return await self.client.sample(messages, max_tokens, key, options)

    async def list_roots(self, *, key: str | None = None) -> Any:
        """The client's roots: an `mcp_types.ListRootsResult`. Without the roots capability: -32021."""
        return await self.client.list_roots(key)

    async def ask(self, **requests: Any) -> dict[str, Any]:
        """Ask several things in one round: each keyword names a request (`Elicit`, `Sample` or `ListRoots` of
        `mcp.server.mcpserver`); returns the answers by the same names."""
        return await self.client.ask(requests)

    def url(self, path: str) -> str:
        """An absolute URL for `path` (which starts with `/`) under the server's base URL."""
        return self.base_url.rstrip("/") + path
