"""Parsing result blocks back into typed values, and rendering those values to the exact same text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from webapp.wire.markup import (
    fence,
    render_bullets,
    render_suggestions,
    render_tool_error,
    render_ui,
    render_validation_error,
    unescape_attr,
    unescape_text,
)

__all__ = [
    "ActionSuggestionsBlock",
    "Block",
    "DataBlock",
    "FieldProblem",
    "RawBlock",
    "RulesBlock",
    "SuggestionItem",
    "ToolErrorBlock",
    "UiPassthroughBlock",
    "ValidationErrorBlock",
    "parse_blocks",
    "render_block",
    "render_blocks",
]


@dataclass(frozen=True)
class DataBlock:
    """The first block of a result that is not an error: its data as JSON or TOON text, or a string as is."""

    text: str
    kind: str = field(default="data", init=False)


@dataclass(frozen=True)
class RawBlock:
    """A later block that is none of the tagged kinds: its text as is."""

    text: str
    kind: str = field(default="raw", init=False)


@dataclass(frozen=True)
class UiPassthroughBlock:
    """A `<ui_passthrough>` block: `lang` and `body` are the fence's when the content is one (`lang` None else)."""

    type: str
    title: str | None
    width: str | None
    priority: int | None
    lang: str | None
    body: str
    kind: str = field(default="ui", init=False)

    @property
    def content(self) -> str:
        """The content inside the wrapper, the fence included."""
        return self.body if self.lang is None else fence(self.lang, self.body)


@dataclass(frozen=True)
class RulesBlock:
    """`<llm_directives>` or `<domain_rules>`: `kind` is the tag."""

    kind: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class SuggestionItem:
    """One `- tool: reason` line of an `<action_suggestions>` block."""

    tool: str
    reason: str


@dataclass(frozen=True)
class ActionSuggestionsBlock:
    """An `<action_suggestions>` block: the next actions suggested to the agent."""

    items: tuple[SuggestionItem, ...]
    kind: str = field(default="action_suggestions", init=False)


@dataclass(frozen=True)
class ToolErrorBlock:
    """A `<tool_error>` block; `actions_inline` is the one-line actions form of the discriminator errors (§10)."""

    code: str | None
    severity: str | None
    message: str
    recovery: str | None
    available_actions: tuple[str, ...]
    actions_inline: bool
    details: tuple[tuple[str, str], ...]
    retry_after: float | None
    kind: str = field(default="tool_error", init=False)


@dataclass(frozen=True)
class FieldProblem:
    """One `<field>` line of a `<validation_error>`: the argument's dotted `name` and what is wrong with it."""

    name: str
    text: str


@dataclass(frozen=True)
class ValidationErrorBlock:
    """A `<validation_error>` block: the `tool/action` called and one problem per field."""

    action: str
    fields: tuple[FieldProblem, ...]
    recovery: str
    kind: str = field(default="validation_error", init=False)


Block = (
    DataBlock
    | RawBlock
    | UiPassthroughBlock
    | RulesBlock
    | ActionSuggestionsBlock
    | ToolErrorBlock
    | ValidationErrorBlock
)
"""Any parsed block; `kind` tells them apart as it does in the JSON of the test vectors."""

_UI_OPEN = re.compile(
    r'<ui_passthrough type="([^"]*)"(?: title="([^"]*)")?(?: width="(full|half|third)")?(?: priority="(-?\d+)")?>'
)
_FENCED = re.compile(r"```([^`\n]*)\n(.*)\n```", re.DOTALL)
_TOOL_ERROR = re.compile(
    r'<tool_error(?: code="(?P<code>[^"]*)")?(?: severity="(?P<severity>[^"]*)")?>\n'
    r"<message>(?P<message>.*?)</message>\n"
    r"(?:<available_actions>(?P<inline>[^\n]*)</available_actions>\n)?"
    r"(?:<recovery>(?P<recovery>.*?)</recovery>\n)?"
    r"(?:<available_actions>\n(?P<actions>(?:  <action>[^\n]*</action>\n)+)</available_actions>\n)?"
    r"(?:<details>\n(?P<details>(?:  <detail key=\"[^\"]*\">.*?</detail>\n)+)</details>\n)?"
    r"(?:<retry_after>(?P<retry>-?[0-9.e+-]+) seconds</retry_after>\n)?"
    r"</tool_error>",
    re.DOTALL,
)
_ACTION = re.compile(r"  <action>([^\n]*)</action>\n")
_DETAIL = re.compile(r'  <detail key="([^"]*)">(.*?)</detail>\n', re.DOTALL)
_VALIDATION = re.compile(
    r'<validation_error action="(?P<action>[^"]*)">\n'
    r'(?P<fields>(?:<field name="[^"]*">.*?</field>\n)*)'
    r"<recovery>(?P<recovery>.*?)</recovery>\n</validation_error>",
    re.DOTALL,
)
_FIELD = re.compile(r'<field name="([^"]*)">(.*?)</field>\n', re.DOTALL)


def _parse_ui(text: str) -> UiPassthroughBlock | None:
    first, newline, _ = text.partition("\n")
    opening = _UI_OPEN.fullmatch(first)
    closing = "\n</ui_passthrough>"
    if not opening or not newline or not text.endswith(closing) or len(text) < len(first) + len(closing) + 1:
        return None
    content = text[len(first) + 1 : -len(closing)]
    fenced = _FENCED.fullmatch(content)
    type_, title, width, priority = opening.groups()
    return UiPassthroughBlock(
        type=unescape_attr(type_),
        title=None if title is None else unescape_attr(title),
        width=width,
        priority=None if priority is None else int(priority),
        lang=fenced.group(1) if fenced else None,
        body=fenced.group(2) if fenced else content,
    )


def _split_items(text: str, tag: str) -> list[str] | None:
    opening, closing = f"<{tag}>\n- ", f"\n</{tag}>"
    if not text.startswith(opening) or not text.endswith(closing) or len(text) < len(opening) + len(closing):
        return None
    return text[len(opening) : -len(closing)].split("\n- ")


def _parse_rules(text: str, tag: str) -> RulesBlock | None:
    items = _split_items(text, tag)
    return None if items is None else RulesBlock(kind=tag, items=tuple(items))


def _parse_suggestions(text: str) -> ActionSuggestionsBlock | None:
    items = _split_items(text, "action_suggestions")
    if items is None or any(": " not in item for item in items):
        return None
    pairs = (item.split(": ", 1) for item in items)
    return ActionSuggestionsBlock(items=tuple(SuggestionItem(tool, reason) for tool, reason in pairs))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() and "e" not in text and "." not in text else value


def _parse_tool_error(text: str) -> ToolErrorBlock | None:
    match = _TOOL_ERROR.fullmatch(text)
    if not match:
        return None
    groups = match.groupdict()
    inline = groups["inline"]
    if inline is not None:
        actions = tuple(unescape_text(inline).split(", "))
    else:
        actions = tuple(unescape_text(a) for a in _ACTION.findall(groups["actions"] or ""))
    return ToolErrorBlock(
        code=None if groups["code"] is None else unescape_attr(groups["code"]),
        severity=None if groups["severity"] is None else unescape_attr(groups["severity"]),
        message=unescape_text(groups["message"]),
        recovery=None if groups["recovery"] is None else unescape_text(groups["recovery"]),
        available_actions=actions,
        actions_inline=inline is not None,
        details=tuple((unescape_attr(k), unescape_text(v)) for k, v in _DETAIL.findall(groups["details"] or "")),
        retry_after=None if groups["retry"] is None else _number(groups["retry"]),
    )


def _parse_validation_error(text: str) -> ValidationErrorBlock | None:
    match = _VALIDATION.fullmatch(text)
    if not match:
        return None
    fields = tuple(FieldProblem(unescape_attr(n), unescape_text(t)) for n, t in _FIELD.findall(match["fields"]))
    return ValidationErrorBlock(
        action=unescape_attr(match["action"]), fields=fields, recovery=unescape_text(match["recovery"])
    )


def _exact(block: Block | None, text: str) -> Block | None:
    """A block is one only when it renders back to exactly its text."""
    return block if block is not None and render_block(block) == text else None


def _parse_error(text: str) -> Block | None:
    if text.startswith("<tool_error"):
        return _exact(_parse_tool_error(text), text)
    if text.startswith("<validation_error "):
        return _exact(_parse_validation_error(text), text)
    return None


def _parse_later(text: str) -> Block:
    block: Block | None = None
    if text.startswith("<ui_passthrough "):
        block = _parse_ui(text)
    elif text.startswith("<llm_directives>\n"):
        block = _parse_rules(text, "llm_directives")
    elif text.startswith("<domain_rules>\n"):
        block = _parse_rules(text, "domain_rules")
    elif text.startswith("<action_suggestions>\n"):
        block = _parse_suggestions(text)
    else:
        block = _parse_error(text)
    return _exact(block, text) or RawBlock(text)


def parse_blocks(content: Iterable[str | Any]) -> list[Block]:
    """Map each text block (a string, or anything with a `.text`) to its parsed form."""
    texts = [item if isinstance(item, str) else str(item.text) for item in content]
    blocks: list[Block] = []
    for index, text in enumerate(texts):
        if index == 0:
            blocks.append(_parse_error(text) or DataBlock(text))
        else:
            blocks.append(_parse_later(text))
    return blocks


def render_block(block: Block) -> str:
    """The exact text of a parsed block: `render_block(parsed)` gives back what was parsed."""
    match block:
        case DataBlock(text=text) | RawBlock(text=text):
            return text
        case UiPassthroughBlock():
            return render_ui(block.type, block.content, block.title, block.width, block.priority)
        case RulesBlock(kind=tag, items=items):
            return render_bullets(tag, items)
        case ActionSuggestionsBlock(items=items):
            return render_suggestions((item.tool, item.reason) for item in items)
        case ToolErrorBlock():
            return render_tool_error(
                message=block.message,
                code=block.code,
                severity=block.severity,
                recovery=block.recovery,
                available_actions=block.available_actions,
                actions_inline=block.actions_inline,
                details=block.details,
                retry_after=block.retry_after,
            )
        case ValidationErrorBlock():
            return render_validation_error(block.action, [(f.name, f.text) for f in block.fields], block.recovery)


def render_blocks(blocks: Sequence[Block]) -> list[str]:
    """The text of each block, in order."""
    return [render_block(block) for block in blocks]
