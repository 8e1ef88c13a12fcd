"""NiceGUI rendering of a result's blocks, from their wire text (parsed by `webapp.wire.parse_blocks`).

Nothing in a result runs in the browser: ECharts options lose their `:`-keys (NiceGUI evaluates them as JavaScript)
and HTML tooltips, Markdown is sanitized by the browser, Mermaid runs with `securityLevel: 'strict'`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
from nicegui import ui

from webapp.wire import (
    ActionSuggestionsBlock,
    Block,
    DataBlock,
    RawBlock,
    RulesBlock,
    ToolErrorBlock,
    UiPassthroughBlock,
    ValidationErrorBlock,
    parse_blocks,
    render_block,
)

__all__ = [
    "MARKDOWN_EXTRAS",
    "MERMAID_CONFIG",
    "display_order",
    "json_tree",
    "render_raw",
    "render_result",
    "sanitize_echarts",
]

log = logging.getLogger(__name__)
MARKDOWN_EXTRAS = ["tables", "fenced-code-blocks"]
MERMAID_CONFIG: dict[str, Any] = {"securityLevel": "strict", "startOnLoad": False}
_KNOWN_TAGS = (
    "<ui_passthrough",
    "<llm_directives>",
    "<domain_rules>",
    "<action_suggestions>",
    "<tool_error",
    "<validation_error",
)
_SECTION_TITLES = {"llm_directives": "LLM directives", "domain_rules": "Domain rules"}
_SAFE_LINK = ("http://", "https://")
OnTool = Callable[[str], None]
_JSON_LINE = 17  # px per line of the JSON tree
_JSON_MIN_HEIGHT = 150  # the tree's own minimum
_JSON_MAX_HEIGHT = 420


def sanitize_echarts(options: Any) -> Any:
    """A copy of ECharts options that cannot run script in the browser.

    Drops every key starting with `:` (NiceGUI turns those into JavaScript), forces tooltips to render on the
    canvas (`renderMode: 'richText'`, so a formatter string is never parsed as HTML), drops the toolbox's data view
    (it writes its texts as HTML) and links that are not http(s). Animation is off unless the options turn it on:
    the viewer shows results, it does not present them.
    """
    cleaned = _clean(options, None)
    if isinstance(cleaned, dict):
        cleaned.setdefault("animation", False)
    return cleaned


def _clean(value: Any, key: str | None) -> Any:
    if isinstance(value, Mapping):
        cleaned: dict[str, Any] = {}
        for name, item in value.items():
            name = str(name)
            if name.startswith(":") or name == "dataView":
                continue
            if name in ("link", "sublink") and not (isinstance(item, str) and item.startswith(_SAFE_LINK)):
                continue
            cleaned[name] = _clean(item, name)
        if key == "tooltip":
            cleaned["renderMode"] = "richText"
        return cleaned
    if isinstance(value, list | tuple):
        return [_clean(item, key) for item in value]
    return value


def display_order(blocks: Sequence[Block]) -> list[Block]:
    """Blocks in display order: every UI block (embedded ones too) grouped where the first one is, sorted by
    `priority` ascending, those without one after them in their order; other blocks keep their place."""
    ui_blocks = [block for block in blocks if isinstance(block, UiPassthroughBlock)]
    ranked = sorted(
        enumerate(ui_blocks),
        key=lambda pair: (pair[1].priority is None, pair[1].priority or 0, pair[0]),
    )
    ordered: list[Block] = []
    placed = False
    for block in blocks:
        if not isinstance(block, UiPassthroughBlock):
            ordered.append(block)
        elif not placed:
            ordered.extend(item for _, item in ranked)
            placed = True
    return ordered


def render_result(texts: Sequence[str], *, on_tool: OnTool | None = None) -> None:
    """Render a result's blocks (their wire texts) into the current NiceGUI container."""
    blocks = display_order(parse_blocks(list(texts)))
    grid: ui.element | None = None
    for block in blocks:
        if isinstance(block, UiPassthroughBlock):
            if grid is None:
                grid = ui.element("div").classes("wv-ui-grid")
            with grid:
                _guarded(block, lambda b=block: _ui_block(b), width=block.width)
        else:
            grid = None
            _guarded(block, lambda b=block: _other_block(b, on_tool))


def render_raw(texts: Sequence[str]) -> None:
    """Every block's wire text, verbatim and numbered."""
    with ui.column().classes("wv-raw w-full"):
        for index, text in enumerate(texts, start=1):
            ui.label(f"block {index}").classes("wv-raw-label")
            ui.label(text).classes("wv-pre")


def json_tree(value: Any) -> ui.json_editor:
    """A read-only JSON tree."""
    properties: dict[str, Any] = {
        "content": {"json": value},
        "readOnly": True,
        "mode": "tree",
        "mainMenuBar": False,
        "navigationBar": False,
        "statusBar": False,
    }
    lines = orjson.dumps(value, option=orjson.OPT_INDENT_2).count(b"\n") + 1
    height = min(_JSON_MAX_HEIGHT, max(_JSON_MIN_HEIGHT, lines * _JSON_LINE + 24))
    return ui.json_editor(properties).classes("wv-json w-full").style(f"height: {height}px")


def _guarded(block: Block, render: Callable[[], None], *, width: str | None = None) -> None:
    """Render one block in its own box; if that fails, show its wire text with a warning instead."""
    box = ui.element("div").classes(f"wv-block wv-w-{width or 'full'}")
    with box:
        try:
            render()
        except Exception as error:
            log.debug("could not render a %s block", block.kind, exc_info=True)
            box.clear()
            with box:
                name = block.type if isinstance(block, UiPassthroughBlock) else block.kind
                _unparsed(render_block(block), f"This {name} block could not be rendered ({error}); shown raw.")


def _unparsed(text: str, warning: str) -> None:
    with ui.element("div").classes("wv-card wv-warning-card"):
        with ui.row().classes("items-center gap-2 no-wrap"):
            ui.icon("warning", color="warning")
            ui.label(warning).classes("wv-warning-text")
        ui.label(text).classes("wv-pre")


def _title(title: str | None) -> None:
    if title:
        ui.label(title).classes("wv-block-title")


def _ui_block(block: UiPassthroughBlock) -> None:
    kind = block.type
    _title(block.title)
    if kind == "echarts":
        options = orjson.loads(block.body)
        if not isinstance(options, dict):
            raise ValueError("ECharts options must be a JSON object")
        ui.echart(sanitize_echarts(options)).classes("wv-chart w-full")
    elif kind == "markdown":
        ui.markdown(block.content, extras=list(MARKDOWN_EXTRAS)).classes("wv-markdown w-full")
    elif kind == "summary":
        with ui.element("div").classes("wv-summary"):
            ui.markdown(block.content, extras=list(MARKDOWN_EXTRAS))
    elif kind == "json":
        json_tree(orjson.loads(block.body))
    elif kind == "mermaid":
        ui.mermaid(block.body, config=dict(MERMAID_CONFIG)).classes("wv-mermaid w-full")
    else:
        ui.code(block.body, language=block.lang or "text").classes("wv-code w-full")


def _other_block(block: Block, on_tool: OnTool | None) -> None:
    match block:
        case DataBlock(text=text):
            _data(text)
        case RawBlock(text=text):
            if text.startswith(_KNOWN_TAGS):
                tag = text[1:].split(">", 1)[0].split(" ", 1)[0]
                _unparsed(text, f"This block looks like <{tag}> but does not follow the format; shown raw.")
            else:
                _section("Raw block", "raw")
                ui.label(text).classes("wv-pre")
        case RulesBlock(kind=tag, items=items):
            _section(_SECTION_TITLES.get(tag, tag), tag)
            with ui.element("ul").classes(f"wv-items wv-{tag}"):
                for item in items:
                    with ui.element("li"):
                        ui.label(item).classes("wv-item-text")
        case ActionSuggestionsBlock(items=items):
            _section("Action suggestions", "action_suggestions")
            with ui.element("ul").classes("wv-items wv-action_suggestions"):
                for item in items:
                    with ui.element("li").classes("wv-suggestion"):
                        chip = ui.label(item.tool).classes("wv-tool-chip")
                        if on_tool is not None:
                            chip.classes("cursor-pointer").on("click", lambda _e, tool=item.tool: on_tool(tool))
                            chip.tooltip("Try this tool")
                        ui.label(item.reason).classes("wv-item-text")
        case ToolErrorBlock():
            _tool_error(block)
        case ValidationErrorBlock():
            _validation_error(block)
        case UiPassthroughBlock():
            _ui_block(block)


def _section(title: str, kind: str) -> None:
    ui.label(title).classes(f"wv-section-title wv-section-{kind}")


def _data(text: str) -> None:
    _section("Data", "data")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    else:
        if isinstance(value, dict | list):
            json_tree(value)
            return
    ui.label(text).classes("wv-pre wv-data-text")


def _field(name: str, value: str, *, mono: bool = False) -> None:
    with ui.row().classes("wv-field no-wrap"):
        ui.label(name).classes("wv-field-name")
        ui.label(value).classes("wv-field-value" + (" wv-mono" if mono else ""))


def _tool_error(block: ToolErrorBlock) -> None:
    severity = block.severity or "error"
    with ui.element("div").classes(f"wv-card wv-error-card wv-severity-{severity}"):
        with ui.row().classes("items-center gap-2"):
            ui.icon("warning" if severity == "warning" else "error").classes("wv-error-icon")
            ui.label("Tool error").classes("wv-error-kind")
            if block.code is not None:
                ui.label(block.code).classes("wv-badge wv-code-badge")
            if block.severity is not None:
                ui.label(block.severity).classes("wv-badge")
        _field("message", block.message)
        if block.recovery is not None:
            _field("recovery", block.recovery)
        if block.available_actions:
            _field("available actions", ", ".join(block.available_actions), mono=True)
        for key, value in block.details:
            _field(f"detail · {key}", value)
        if block.retry_after is not None:
            _field("retry after", f"{block.retry_after:g} seconds")


def _validation_error(block: ValidationErrorBlock) -> None:
    with ui.element("div").classes("wv-card wv-error-card wv-severity-error"):
        with ui.row().classes("items-center gap-2"):
            ui.icon("rule").classes("wv-error-icon")
            ui.label("Validation error").classes("wv-error-kind")
            ui.label(block.action).classes("wv-badge wv-code-badge")
        for problem in block.fields:
            _field(problem.name, problem.text)
        _field("recovery", block.recovery)
