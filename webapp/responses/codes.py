"""The framework's error codes: one registry of code, message and recovery that the tools, the bridge, the server, the
tunnel and the viewer answer with (wire-format §5, apps.md §11); the reference's error page is generated from it."""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = ["ERROR_CODES", "ErrorCode", "Source", "error_code"]

Source = Literal["tools", "bridge", "server", "tunnel", "viewer"]
_FORMATTER = string.Formatter()


@dataclass(frozen=True, slots=True)
class ErrorCode:
    """One error an agent can get: its `code`, when it happens, and the `message` and `recovery` templates.

    The templates are `str.format` texts whose fields the caller fills (`{app}`, `{tool}`, ...). A code with several
    causes has one entry per `case`; the agent sees the same code for all of them.
    """

    code: str
    source: Source
    when: str
    message: str
    recovery: str | None = None
    case: str = ""

    @property
    def fields(self) -> frozenset[str]:
        """The names the templates need."""
        texts = (self.message, self.recovery or "")
        return frozenset(name for text in texts for _, name, _, _ in _FORMATTER.parse(text) if name)

    def texts(self, **values: object) -> tuple[str, str | None]:
        """The message and the recovery (None when there is none) filled with `values`."""
        missing = self.fields - values.keys()
        if missing:
            raise ValueError(f"the {self.code} error needs the values {', '.join(sorted(missing))}; pass them")
        recovery = self.recovery.format(**values) if self.recovery else None
        return self.message.format(**values), recovery


_RETRY_SAME_CALL = "Retry in a few seconds with the same _call_id."
_ALL = (
    # -- calling a tool (webapp.tools) ------------------------------------------------------------------------------
    ErrorCode(
        "UNKNOWN_TOOL",
        "tools",
        "The call names a tool the server does not have.",
        'Tool "{tool}" does not exist.',
        "Check the available tools via tools/list and call a valid one.",
    ),
    ErrorCode(
        "MISSING_DISCRIMINATOR",
        "tools",
        'A tool with several actions was called without its "action" field (or with an empty one).',
        'The required field "action" is missing.',
        'Add the "action" field as a string and call the tool again.',
    ),
    ErrorCode(
        "INVALID_DISCRIMINATOR",
        "tools",
        'The "action" field is not a string; `{kind}` is how JavaScript\'s typeof names what was sent.',
        'Discriminator field "action" must be a string, got {kind}.',
        'Set "action" to one of the available actions as a string.',
    ),
    ErrorCode(
        "UNKNOWN_ACTION",
        "tools",
        'The "action" field names an action the tool does not have.',
        'The action "{action}" does not exist.',
        "Choose a valid action from available_actions and call the tool again.",
    ),
    ErrorCode(
        "MISSING_REQUIRED_FIELD",
        "tools",
        "A handler returned `required(field)`: a parameter it needs was not sent.",
        'Required field "{field}" is missing.',
        'Provide the "{field}" parameter and retry.',
    ),
    ErrorCode(
        "INVALID_INPUT",
        "tools",
        "A `_call_id` is sent again with other arguments than its first call.",
        "[{label}] The call id {call_id!r} already stands for a call with other arguments.",
        "Send a new _call_id for a new call, or repeat that call unchanged.",
    ),
    ErrorCode(
        "STORE_UNAVAILABLE",
        "tools",
        "The database cannot be reached; the call changed nothing.",
        "[{label}] The database cannot be reached now; nothing was changed.",
        _RETRY_SAME_CALL,
    ),
    ErrorCode(
        "INTERNAL_ERROR",
        "tools",
        "A handler raised an exception; its text is the message, its traceback goes to the server log only.",
        "[{label}] {error}",
        "This may be a transient error. Retry the same call with identical parameters.",
    ),
    ErrorCode(
        "INTERNAL_ERROR",
        "bridge",
        "Several workers: the worker holding the view took the call but sent back no result.",
        "[{tool}] the worker holding the view could not run the call",
        _RETRY_SAME_CALL,
        case="forwarded",
    ),
    # -- reaching a view (webapp.bridge) -------------------------------------------------------------------------------
    ErrorCode(
        "VIEW_NOT_OPEN",
        "bridge",
        "An app's action or update tool is called while the caller has no view of that app open.",
        "The view '{app}' is not open in this conversation. Call the tool '{app}' to open it.",
        "Call '{app}' first, then retry this call.",
    ),
    ErrorCode(
        "VIEW_OPENING",
        "bridge",
        "The view exists but no browser tab has attached to it yet.",
        "The view '{app}' is still opening: no browser has attached to it yet.",
        "Ask the user to open the view's URL, then retry.",
    ),
    ErrorCode(
        "VIEW_CLOSED",
        "bridge",
        "The view's tab was closed (or did not come back within the reconnect grace).",
        "The view '{app}' was closed. Call the tool '{app}' to open it again.",
    ),
    ErrorCode(
        "VIEW_REPLACED",
        "bridge",
        "The `_view` id names a view that opening the app again replaced (`--reopen new`).",
        "The view '{view}' was replaced by a newer '{app}' view.",
        "Retry without _view, or call '{app}'.",
    ),
    ErrorCode(
        "VIEW_AMBIGUOUS",
        "bridge",
        "The caller has several views of the app open and sent no `_view`.",
        "Several '{app}' views are open; pass _view to choose one.",
        "Call '{app}' to get the id of your view.",
    ),
    ErrorCode(
        "VIEW_UNKNOWN",
        "bridge",
        "The `_view` id names no view of this caller.",
        "No '{app}' view has the id '{view}'.",
        "Call '{app}' to open a view.",
    ),
    ErrorCode(
        "VIEW_TIMEOUT",
        "bridge",
        "The view did not answer within `--call-timeout`.",
        "The view '{app}' did not answer within {seconds} seconds; the action may not have run.",
        "Retry with the same _call_id.",
    ),
    ErrorCode(
        "VIEW_TIMEOUT",
        "tools",
        "A retry with the same `_call_id` took the call over while this attempt still ran.",
        "[{label}] A retry with the same _call_id took this call over; this attempt changed nothing.",
        "Retry with the same _call_id.",
        case="taken over",
    ),
    ErrorCode(
        "TOO_MANY_VIEWS",
        "bridge",
        "Opening a view would exceed `--max-views-per-caller`.",
        "No new '{app}' view was opened: {limit} views are already open for this caller, which is the limit.",
        "Pass _view to reuse one of your open views, or ask the user to close view tabs, then retry.",
    ),
    ErrorCode(
        "VIEW_UNAVAILABLE",
        "bridge",
        "Several workers: the worker that held the view is gone; the view's tab reconnects to another one.",
        "The server holding the view '{app}' is gone; its tab reconnects on its own.",
        _RETRY_SAME_CALL,
    ),
    ErrorCode(
        "BRIDGE_UNAVAILABLE",
        "bridge",
        "Several workers: the worker that holds the view cannot be reached now (Redis or the worker is away, or the "
        "worker did not acknowledge the call within 1 s).",
        "The view '{app}' is served by another worker, which cannot be reached now.",
        _RETRY_SAME_CALL,
    ),
    # -- a stopping server (webapp.server) -----------------------------------------------------------------------------
    ErrorCode(
        "SERVER_STOPPING",
        "server",
        "A call arrives while the server drains (SIGTERM); it did not run.",
        "The server is stopping and took no new calls; '{tool}' did not run.",
        "Retry in a few seconds (the server or another worker will answer).",
    ),
    ErrorCode(
        "SERVER_STOPPING",
        "server",
        "A call still runs when the stopping server's `--drain-timeout` ends.",
        "The server stopped before '{tool}' finished ({grace} seconds after the stop); the action may not have run.",
        _RETRY_SAME_CALL,
        case="stopped",
    ),
    ErrorCode(
        "MISSING_CAPABILITY",
        "server",
        "A tool asks its client (elicitation, sampling, roots) in a call made outside MCP (the viewer's try panel); "
        "over MCP the client gets the JSON-RPC error -32021 instead.",
        "'{tool}' needs to ask its MCP client, and this call has none.",
        "Call the tool from an MCP client that declares the capability.",
    ),
    # -- a view tunnelled through the host's MCP connection (webapp.embed) ---------------------------------------------
    ErrorCode(
        "TUNNEL_UNKNOWN",
        "tunnel",
        "The tunnel's ticket was used, expired or is not valid, or the tunnel was closed (one text for all causes).",
        "This tunnel is not open for you: its ticket was already used, has expired or is not valid, or the tunnel was "
        "closed.",
        "Ask the assistant to open the view again: its new result boots a new tunnel.",
    ),
    ErrorCode(
        "TUNNEL_UNAVAILABLE",
        "tunnel",
        "Several workers: the worker holding the tunnel cannot be reached now (Redis or that worker is away for a "
        "moment); the tunnel may still be open, and only TUNNEL_UNKNOWN means it is gone.",
        "The worker holding this tunnel cannot be reached now; the tunnel may still be open.",
        "Retry in a moment (the view's frame retries on its own, waiting longer each time).",
    ),
    ErrorCode(
        "TUNNEL_REFUSED",
        "tunnel",
        "A tunnel request breaks the tunnel's rules (the message says which).",
        "{reason}",
        "Send only the requests NiceGUI's socket sends on its tunnel: one GET and one POST at a time.",
    ),
    # -- the call viewer's Try panel (webapp.viewer) -------------------------------------------------------------------
    ErrorCode(
        "INSUFFICIENT_SCOPE",
        "viewer",
        "A person signed in to the viewer tries a call that needs scopes their sign-in did not grant.",
        "[{tool}] This call needs the scopes: {needed}; you lack {missing}.",
        "Ask the issuer's administrator to grant you those scopes, then sign in again.",
    ),
)

ERROR_CODES: Mapping[tuple[str, str], ErrorCode] = MappingProxyType({(entry.code, entry.case): entry for entry in _ALL})
"""Every framework error, by `(code, case)`; the first case of a code is `""`."""


def error_code(code: str, case: str = "") -> ErrorCode:
    """The registered error `code` (and `case`); a `KeyError` names the codes there are."""
    try:
        return ERROR_CODES[(code, case)]
    except KeyError:
        known = ", ".join(sorted({entry.code for entry in _ALL}))
        raise KeyError(f"no framework error {code!r} (case {case!r}); the codes are {known}") from None
