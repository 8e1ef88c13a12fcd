"""Properties of the wire: what the library builds parses back exactly, and data never poses as markup."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from webapp import Suggestion, UiBlock, response, tool_error, ui
from webapp.testing import texts as texts_of
from webapp.wire import DataBlock, parse_blocks, render_blocks

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
widths = st.none() | st.sampled_from(["full", "half", "third"])
priorities = st.none() | st.integers(-5, 100)


@st.composite
def ui_blocks(draw: st.DrawFn) -> UiBlock:
    attrs: dict[str, Any] = {"title": draw(st.none() | texts), "width": draw(widths), "priority": draw(priorities)}
    helper = draw(st.sampled_from(["echarts", "json", "markdown", "mermaid", "summary", "code", "table", "list"]))
    if helper in ("echarts", "json"):
        return getattr(ui, helper)(draw(json_values), **attrs)
    if helper == "code":
        return ui.code_block(draw(st.from_regex(r"[a-z]{1,8}", fullmatch=True)), draw(texts), **attrs)
    if helper == "table":
        return ui.table(draw(st.lists(texts, min_size=1, max_size=3)), draw(st.lists(st.lists(texts), max_size=3)))
    if helper == "list":
        return ui.list(draw(st.lists(texts, max_size=4)), **attrs)
    return getattr(ui, helper)(draw(texts), **attrs)


@given(
    data=json_values,
    blocks=st.lists(ui_blocks(), max_size=4),
    hints=st.lists(texts, max_size=3),
    rules=st.lists(texts, max_size=3),
    suggestions=st.lists(st.tuples(st.from_regex(r"[a-z_.]{1,12}", fullmatch=True), texts), max_size=3),
)
def test_a_built_response_parses_and_renders_back_to_the_same_text(
    data: Any, blocks: list[UiBlock], hints: list[str], rules: list[str], suggestions: list[tuple[str, str]]
) -> None:
    builder = response(data).ui_blocks(blocks).rules(rules).suggest([Suggestion(*pair) for pair in suggestions])
    for hint in hints:
        builder.llm_hint(hint)
    texts_sent = texts_of(builder.build())
    assert render_blocks(parse_blocks(texts_sent)) == texts_sent


@given(data=json_values.filter(lambda value: not isinstance(value, str)))
def test_non_string_data_is_always_parsed_as_the_data_block(data: Any) -> None:
    sent = texts_of(response(data).build())
    assert parse_blocks(sent)[0] == DataBlock(sent[0])


@given(
    data=json_values.filter(lambda value: not isinstance(value, str)),
    later=st.lists(json_values.filter(lambda value: not isinstance(value, str)), max_size=3),
)
def test_non_string_data_appended_as_raw_text_never_becomes_markup(data: Any, later: list[Any]) -> None:
    texts_sent = [texts_of(response(value).build())[0] for value in [data, *later]]
    assert [block.kind for block in parse_blocks(texts_sent)] == ["data"] + ["raw"] * len(later)


@given(
    code=texts,
    message=texts,
    suggestion=st.none() | texts,
    actions=st.lists(texts, max_size=3),
    details=st.dictionaries(texts, json_scalars, max_size=3),
    retry=st.none() | st.floats(0.001, 1e6),
)
def test_a_tool_error_parses_and_renders_back_to_the_same_text(
    code: str,
    message: str,
    suggestion: str | None,
    actions: list[str],
    details: dict[str, Any],
    retry: float | None,
) -> None:
    result = tool_error(
        code, message=message, suggestion=suggestion, available_actions=actions, details=details, retry_after=retry
    )
    texts_sent = texts_of(result)
    assert render_blocks(parse_blocks(texts_sent)) == texts_sent
