"""UI helpers: each returns a `UiBlock` that the response builder wraps in `<ui_passthrough>`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from webapp.wire import WIDTHS, fence, js_scalar, to_json

__all__ = ["UiBlock", "code_block", "echarts", "json", "list", "markdown", "mermaid", "summary", "table"]


@dataclass(frozen=True)
class UiBlock:
    """One UI block: `content` is what goes inside the wrapper (a fence, or Markdown).

    `title` labels it; `width` (`full`, `half`, `third`) and `priority` (an int) are layout hints written into the
    block's wrapper for whoever renders it. The helpers of `webapp.ui` make the common kinds.
    """

    type: str
    content: str
    title: str | None = None
    width: str | None = None
    priority: int | None = None

    def __post_init__(self) -> None:
        if self.width is not None and self.width not in WIDTHS:
            raise ValueError(f"UiBlock width must be one of {', '.join(WIDTHS)}; got {self.width!r}.")


def echarts(config: Any, *, title: str | None = None, width: str | None = None, priority: int | None = None) -> UiBlock:
    """An Apache ECharts chart: `config` is the chart's option object (axes, series, ...), as JSON."""
    return UiBlock("echarts", fence("echarts", to_json(config)), title, width, priority)


def mermaid(text: str, *, title: str | None = None, width: str | None = None, priority: int | None = None) -> UiBlock:
    """A Mermaid diagram from its source `text`."""
    return UiBlock("mermaid", fence("mermaid", text), title, width, priority)


def markdown(md: str, *, title: str | None = None, width: str | None = None, priority: int | None = None) -> UiBlock:
    """Markdown text, rendered as is."""
    return UiBlock("markdown", md, title, width, priority)


def code_block(
    lang: str, code: str, *, title: str | None = None, width: str | None = None, priority: int | None = None
) -> UiBlock:
    """Source code in a fence tagged with its language `lang`."""
    return UiBlock(lang, fence(lang, code), title, width, priority)


def _cell(value: Any) -> str:
    return js_scalar(value).replace("|", "\\|").replace("\n", "<br>")


def _row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join(_cell(cell) for cell in cells) + " |"


def table(
    headers: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    width: str | None = None,
    priority: int | None = None,
) -> UiBlock:
    """A Markdown table: one header row, then one row per item of `rows` (cells as JSON scalars)."""
    lines = [_row(headers), "| " + " | ".join("---" for _ in headers) + " |"]
    lines.extend(_row(row) for row in rows)
    content = "\n".join(lines) if len(lines) > 2 else "\n".join(lines) + "\n"
    return UiBlock("markdown", content, title, width, priority)


def list(
    items: Iterable[Any], *, title: str | None = None, width: str | None = None, priority: int | None = None
) -> UiBlock:
    """A Markdown bullet list, one item per line."""
    return UiBlock("markdown", "\n".join(f"- {js_scalar(item)}" for item in items), title, width, priority)


def json(value: Any, *, title: str | None = None, width: str | None = None, priority: int | None = None) -> UiBlock:
    """A JSON value, pretty-printed in a fence for the viewer to fold."""
    return UiBlock("json", fence("json", to_json(value)), title, width, priority)


def summary(text: str, *, title: str | None = None, width: str | None = None, priority: int | None = None) -> UiBlock:
    """A one-line summary, shown prominently (`📊 **Summary**: text`)."""
    return UiBlock("summary", f"📊 **Summary**: {text}", title, width, priority)
