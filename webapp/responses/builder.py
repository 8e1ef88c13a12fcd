"""Responses: the block builder, success and error results, and the out-of-band side door for tests."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import mcp_types
import orjson
from pydantic import PrivateAttr

from webapp.responses.codes import error_code
from webapp.responses.ui import UiBlock
from webapp.wire import (
    plain,
    render_bullets,
    render_suggestions,
    render_tool_error,
    render_ui,
    render_validation_error,
    to_json,
)

__all__ = [
    "SEVERITIES",
    "BuiltResult",
    "ErrorBuilder",
    "ResponseBuilder",
    "SideDoor",
    "Suggestion",
    "data_text",
    "error",
    "error_builder",
    "framework_error",
    "required",
    "response",
    "side_door",
    "success",
    "success_structured",
    "text_result",
    "tool_error",
    "validation_error",
]

SEVERITIES = ("warning", "error", "critical")


@dataclass(frozen=True)
class Suggestion:
    """A next action for the agent: rendered as `- {tool}: {reason}`."""

    tool: str
    reason: str


class SideDoor:
    """What a built response carried before serialization; read by `webapp.testing.meta`, never sent."""

    def __init__(self, data_text: str, system_rules: list[str], ui_blocks: list[UiBlock]) -> None:
        self._data_text = data_text
        self.system_rules = system_rules
        self.ui_blocks = ui_blocks

    @cached_property
    def data(self) -> Any:
        try:
            return orjson.loads(self._data_text)
        except orjson.JSONDecodeError:
            return self._data_text


class BuiltResult(mcp_types.CallToolResult):
    """A `CallToolResult` built by this library; the side door is a private attribute, so no dump shows it."""

    _side_door: SideDoor | None = PrivateAttr(default=None)


def side_door(result: mcp_types.CallToolResult) -> SideDoor | None:
    return result._side_door if isinstance(result, BuiltResult) else None  # pyright: ignore[reportPrivateUsage]


def text_result(
    texts: Iterable[str], *, is_error: bool = False, structured: dict[str, Any] | None = None
) -> BuiltResult:
    content: list[mcp_types.ContentBlock] = [mcp_types.TextContent(type="text", text=text) for text in texts]
    return BuiltResult(content=content, is_error=is_error, structured_content=structured)


def data_text(data: Any) -> str:
    """The data block: strings verbatim, `""`/None as `OK`, anything else as pretty JSON."""
    if data is None or data == "":
        return "OK"
    if isinstance(data, str):
        return data
    return to_json(plain(data))


class ResponseBuilder:
    """Collects the blocks of one response; `build()` orders them by category and can be called again."""

    def __init__(self, data: Any) -> None:
        self._data = data
        self._ui: list[UiBlock] = []
        self._raw: list[str] = []
        self._hints: list[str] = []
        self._rules: list[str] = []
        self._suggestions: list[Suggestion] = []

    def ui_block(self, block: UiBlock) -> ResponseBuilder:
        """Add a block for the viewer and hosts to render (`ui.table(...)`, `ui.echarts(...)`, ...)."""
        self._ui.append(block)
        return self

    def ui_blocks(self, blocks: Iterable[UiBlock | None]) -> ResponseBuilder:
        """Add several UI blocks in order; `None` items are skipped."""
        self._ui.extend(block for block in blocks if block)
        return self

    def raw_block(self, text: str) -> ResponseBuilder:
        """Add a text block as is, after the UI blocks."""
        self._raw.append(text)
        return self

    def llm_hint(self, text: str | None) -> ResponseBuilder:
        """Add a hint for the agent (an `<llm_directives>` item); `None` adds nothing."""
        if text is not None:
            self._hints.append(text)
        return self

    def rules(self, rules: Iterable[str | None]) -> ResponseBuilder:
        """Add rules the agent must follow when it reads the data (`<domain_rules>`), e.g. the unit of a number."""
        self._rules.extend(rule for rule in rules if rule is not None)
        return self

    def suggest(self, suggestions: Iterable[Suggestion | None]) -> ResponseBuilder:
        """Add next actions for the agent (`<action_suggestions>`); `None` items are skipped."""
        self._suggestions.extend(s for s in suggestions if s is not None)
        return self

    def build(self) -> BuiltResult:
        """The result: the data, then the UI blocks, raw blocks, hints, rules and suggestions (wire format §2)."""
        data = data_text(self._data)
        texts = [data]
        texts.extend(render_ui(b.type, b.content, b.title, b.width, b.priority) for b in self._ui)
        texts.extend(self._raw)
        if self._hints:
            texts.append(render_bullets("llm_directives", self._hints))
        if self._rules:
            texts.append(render_bullets("domain_rules", self._rules))
        if self._suggestions:
            texts.append(render_suggestions((s.tool, s.reason) for s in self._suggestions))
        result = text_result(texts)
        result._side_door = SideDoor(data, list(self._rules), list(self._ui))  # pyright: ignore[reportPrivateUsage]
        return result


def response(data: Any) -> ResponseBuilder:
    """Start a result whose first block is `data` (JSON text; a string as is); chain blocks, then `.build()`."""
    return ResponseBuilder(data)


def success(data: Any) -> BuiltResult:
    """A result of one block: `data` as JSON text (a string as is)."""
    return text_result([data_text(data)])


def success_structured(data: Any) -> BuiltResult:
    """The JSON text block plus the same object as `structuredContent` (separate from Presenters)."""
    value = plain(data)
    if not isinstance(value, dict):
        raise TypeError(f"success_structured() needs an object (a dict or a model); got {type(data).__name__}.")
    structured: dict[str, Any] = value
    return text_result([data_text(structured)], structured=structured)


def error(message: str, code: str | None = None) -> BuiltResult:
    """The short error envelope: a message and an optional code, no recovery (prefer `tool_error`)."""
    return text_result([render_tool_error(message=message, code=code)], is_error=True)


def required(field: str) -> BuiltResult:
    """The MISSING_REQUIRED_FIELD error for a parameter the handler needs and the call did not send."""
    message, recovery = error_code("MISSING_REQUIRED_FIELD").texts(field=field)
    text = render_tool_error(code="MISSING_REQUIRED_FIELD", message=message, recovery=recovery)
    return text_result([text], is_error=True)


def _detail_text(value: Any) -> str:
    return value if isinstance(value, str) else to_json(value)


def tool_error(
    code: str,
    *,
    message: str,
    suggestion: str | None = None,
    available_actions: Sequence[str] = (),
    severity: str = "error",
    details: Mapping[str, Any] | None = None,
    retry_after: float | None = None,
) -> BuiltResult:
    """The structured error envelope; a `warning` is not an error (`isError` false)."""
    if severity not in SEVERITIES:
        raise ValueError(f"tool_error severity must be one of {', '.join(SEVERITIES)}; got {severity!r}.")
    retry = retry_after if retry_after is not None and math.isfinite(retry_after) and retry_after > 0 else None
    text = render_tool_error(
        code=code,
        severity=severity,
        message=message,
        recovery=suggestion,
        available_actions=list(available_actions),
        details=[(key, _detail_text(value)) for key, value in (details or {}).items()],
        retry_after=retry,
    )
    return text_result([text], is_error=severity != "warning")


def framework_error(
    code: str,
    case: str = "",
    *,
    available_actions: Sequence[str] = (),
    details: Mapping[str, Any] | None = None,
    **values: object,
) -> BuiltResult:
    """The `tool_error` of a registered framework error (`webapp.responses.codes`), its texts filled with `values`."""
    message, recovery = error_code(code, case).texts(**values)
    return tool_error(code, message=message, suggestion=recovery, available_actions=available_actions, details=details)


def validation_error(action: str, fields: Sequence[tuple[str, str]]) -> BuiltResult:
    return text_result([render_validation_error(action, fields)], is_error=True)


class ErrorBuilder:
    """Chainable `tool_error`: repeated `.actions()` append, repeated `.details()` merge."""

    def __init__(self, code: str, message: str) -> None:
        self._code = code
        self._message = message
        self._suggestion: str | None = None
        self._actions: list[str] = []
        self._severity = "error"
        self._details: dict[str, Any] = {}
        self._retry_after: float | None = None

    def suggest(self, suggestion: str) -> ErrorBuilder:
        """Set the recovery: what the agent should do next."""
        self._suggestion = suggestion
        return self

    def actions(self, *names: str) -> ErrorBuilder:
        """Add tools the agent may call to recover (`<available_actions>`)."""
        self._actions.extend(names)
        return self

    def severity(self, severity: str) -> ErrorBuilder:
        if severity not in SEVERITIES:
            raise ValueError(f"ErrorBuilder severity must be one of {', '.join(SEVERITIES)}; got {severity!r}.")
        self._severity = severity
        return self

    def critical(self) -> ErrorBuilder:
        """Set the severity to `critical`."""
        return self.severity("critical")

    def warning(self) -> ErrorBuilder:
        """Set the severity to `warning`: the result is then no error (`isError` false)."""
        return self.severity("warning")

    def details(self, details: Mapping[str, Any]) -> ErrorBuilder:
        """Add key/value details (`<details>`); repeated calls merge."""
        self._details.update(details)
        return self

    def retry_after(self, seconds: float) -> ErrorBuilder:
        """Tell the agent to wait this many seconds before a retry."""
        self._retry_after = seconds
        return self

    def build(self) -> BuiltResult:
        """The `tool_error` result."""
        return tool_error(
            self._code,
            message=self._message,
            suggestion=self._suggestion,
            available_actions=self._actions,
            severity=self._severity,
            details=self._details,
            retry_after=self._retry_after,
        )


def error_builder(code: str, message: str) -> ErrorBuilder:
    """Start a `tool_error` to chain; a handler may return it unbuilt."""
    return ErrorBuilder(code, message)
