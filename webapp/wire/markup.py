"""The text forms of the blocks: escaping, the fence, and one renderer per block kind."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from webapp.wire.jsontext import js_number

__all__ = [
    "VALIDATION_RECOVERY",
    "WIDTHS",
    "escape_attr",
    "escape_text",
    "fence",
    "render_bullets",
    "render_suggestions",
    "render_tool_error",
    "render_ui",
    "render_validation_error",
    "unescape_attr",
    "unescape_text",
]

WIDTHS = ("full", "half", "third")
"""The widths a UI block may ask for (§2)."""
VALIDATION_RECOVERY = "Fix the fields above and call the tool again. Do not explain the error."
"""The recovery line of every `<validation_error>` (§5)."""
FENCE = "```"


def fence(lang: str, body: str) -> str:
    """The only place that writes a fence: should MCP standardise UI blocks, this is what changes."""
    return f"{FENCE}{lang}\n{body}\n{FENCE}"


def escape_text(text: str) -> str:
    """Element text as the wire writes it: `&` then `<` escaped (§5)."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def unescape_text(text: str) -> str:
    """The inverse of `escape_text`."""
    return text.replace("&lt;", "<").replace("&amp;", "&")


def escape_attr(text: str) -> str:
    """An attribute value as the wire writes it: the five XML characters escaped (§2)."""
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def unescape_attr(text: str) -> str:
    """The inverse of `escape_attr`."""
    return (
        text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", '"')
        .replace("&apos;", "'")
        .replace("&amp;", "&")
    )


def render_ui(type_: str, content: str, title: str | None, width: str | None, priority: int | None) -> str:
    """A `<ui_passthrough>` block: its attributes in the order type, title, width, priority, each only when given."""
    attrs = f'type="{escape_attr(type_)}"'
    if title:
        attrs += f' title="{escape_attr(title)}"'
    if width is not None:
        attrs += f' width="{escape_attr(width)}"'
    if priority is not None:
        attrs += f' priority="{priority}"'
    return f"<ui_passthrough {attrs}>\n{content}\n</ui_passthrough>"


def render_bullets(tag: str, items: Iterable[str]) -> str:
    """A `<tag>` block of `- item` lines (`llm_directives`, `domain_rules`, `action_suggestions`)."""
    lines = "\n".join(f"- {item}" for item in items)
    return f"<{tag}>\n{lines}\n</{tag}>"


def render_suggestions(pairs: Iterable[tuple[str, str]]) -> str:
    """The `<action_suggestions>` block: one `- tool: reason` line per pair."""
    return render_bullets("action_suggestions", (f"{tool}: {reason}" for tool, reason in pairs))


def render_tool_error(
    *,
    message: str,
    code: str | None = None,
    severity: str | None = None,
    recovery: str | None = None,
    available_actions: Sequence[str] = (),
    actions_inline: bool = False,
    details: Sequence[tuple[str, str]] = (),
    retry_after: float | None = None,
) -> str:
    """A `<tool_error>` envelope; detail values must already be text (see `js_scalar`)."""
    opening = "<tool_error"
    if code is not None:
        opening += f' code="{escape_attr(code)}"'
    if severity is not None:
        opening += f' severity="{escape_attr(severity)}"'
    lines = [opening + ">", f"<message>{escape_text(message)}</message>"]
    if available_actions and actions_inline:
        lines.append(f"<available_actions>{escape_text(', '.join(available_actions))}</available_actions>")
    if recovery:
        lines.append(f"<recovery>{escape_text(recovery)}</recovery>")
    if available_actions and not actions_inline:
        lines.append("<available_actions>")
        lines.extend(f"  <action>{escape_text(action)}</action>" for action in available_actions)
        lines.append("</available_actions>")
    if details:
        lines.append("<details>")
        lines.extend(f'  <detail key="{escape_attr(key)}">{escape_text(value)}</detail>' for key, value in details)
        lines.append("</details>")
    if retry_after is not None:
        lines.append(f"<retry_after>{js_number(retry_after)} seconds</retry_after>")
    lines.append("</tool_error>")
    return "\n".join(lines)


def render_validation_error(action: str, fields: Sequence[tuple[str, str]], recovery: str = VALIDATION_RECOVERY) -> str:
    """A `<validation_error>` block for `tool/action`: one `<field>` line per (path, text) problem (§5)."""
    lines = [f'<validation_error action="{escape_attr(action)}">']
    lines.extend(f'<field name="{escape_attr(name)}">{escape_text(text)}</field>' for name, text in fields)
    lines.append(f"<recovery>{escape_text(recovery)}</recovery>")
    lines.append("</validation_error>")
    return "\n".join(lines)
