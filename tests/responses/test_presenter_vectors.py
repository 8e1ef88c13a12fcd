"""The wire vectors of kinds presenter, pipeline_error and toon_description, byte for byte."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, cast

import pytest
from pydantic import BaseModel, Field, create_model

from tests.support.wire_vectors import assert_result, case_id, cases
from webapp import Presenter, Suggestion, Tool, ToolRegistry, UiBlock, ui
from webapp.responses.fields import Censor
from webapp.wire import to_json

Spec = Mapping[str, Any]
_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool}
_KEY = re.compile(r"\{([^{}]+)\}")


def build_model(name: str, schema: Spec) -> type[BaseModel]:
    definitions: dict[str, Any] = {}
    for field_name, spec in schema["fields"].items():
        kind = spec["type"]
        annotation: Any
        if kind == "enum":
            annotation = cast(Any, Literal)[tuple(spec["enum"])]
        elif kind in ("object", "list"):
            nested: Any = build_model(f"{name}_{field_name}", spec) if "fields" in spec else Any
            annotation = (nested if "fields" in spec else dict[str, Any]) if kind == "object" else list[nested]
        else:
            annotation = _TYPES[kind]
        default: Any = ...
        if spec.get("optional"):
            annotation, default = annotation | None, None
        definitions[field_name] = (annotation, Field(default, description=spec.get("description")))
    return create_model(name, **definitions)


def lookup(source: Any, dotted: str) -> Any:
    value = source
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else to_json(value)


def fill(template: str, source: Any) -> str:
    return _KEY.sub(lambda match: text_of(lookup(source, match[1])), template)


def holds(condition: Spec, item: Any, ctx: Any) -> bool:
    source, key = (ctx, condition["ctx"]) if "ctx" in condition else (item, condition["field"])
    return lookup(source, key) == condition["equals"]


def attrs(spec: Spec) -> dict[str, Any]:
    return {key: spec[key] for key in ("title", "width", "priority") if key in spec}


def item_block(spec: Spec, item: Any) -> UiBlock:
    helper = spec["helper"]
    if helper in ("summary", "markdown", "mermaid"):
        return cast(Callable[..., UiBlock], getattr(ui, helper))(fill(spec["template"], item), **attrs(spec))
    if helper == "code_block":
        return ui.code_block(spec["lang"], fill(spec["template"], item), **attrs(spec))
    if helper == "echarts":
        return ui.echarts(spec["config"], **attrs(spec))
    assert helper == "json", helper
    return ui.json({field: item[field] for field in spec["fields"]}, **attrs(spec))


def collection_block(spec: Spec, items: list[Any]) -> UiBlock:
    helper = spec["helper"]
    if helper == "list":
        return ui.list([fill(spec["template"], item) for item in items], **attrs(spec))
    if helper == "table":
        columns = spec["columns"]
        return ui.table(columns, [[text_of(item[c]) for c in columns] for item in items], **attrs(spec))
    if helper == "json":
        return ui.json([{field: item[field] for field in spec["fields"]} for item in items], **attrs(spec))
    return item_block(spec, {"count": len(items)})


def make_censor(spec: str | Spec) -> Censor:
    """A string, or `{prefix, keep_last}`: the prefix plus the last characters of the original value."""
    if isinstance(spec, str):
        return spec
    prefix, keep = spec["prefix"], spec["keep_last"]

    def censor(value: Any) -> str:
        return prefix + str(value)[-keep:]

    return censor


def build_presenter(spec: Spec) -> Presenter:
    schema = build_model(spec["name"], spec["schema"]) if "schema" in spec else None
    presenter = Presenter(spec["name"], schema=schema).auto_rules(spec.get("auto_rules", True))
    if "limit" in spec:
        presenter.limit(spec["limit"])
    if "agent_limit" in spec:
        limit_ui = spec["agent_limit"]["ui"]
        presenter.agent_limit(spec["agent_limit"]["max"], lambda omitted: item_block(limit_ui, {"omitted": omitted}))
    static_rules: list[str] = spec.get("rules", [])
    if "rules_when" in spec:
        when_rules: list[Spec] = spec["rules_when"]
        presenter.rules(
            lambda item, ctx: [*static_rules, *(r for c in when_rules if holds(c, item, ctx) for r in c["rules"])]
        )
    elif static_rules:
        presenter.rules(static_rules)
    if "suggest" in spec or "suggest_when" in spec:
        pairs: list[list[str]] = spec.get("suggest", [])
        when_pairs: list[Spec] = spec.get("suggest_when", [])

        def suggest(item: Any, ctx: Any) -> list[Suggestion]:
            chosen = [*pairs, *(p for c in when_pairs if holds(c, item, ctx) for p in c["suggest"])]
            return [Suggestion(tool, reason) for tool, reason in chosen]

        presenter.suggest(suggest)
    if "ui" in spec:
        item_specs: list[Spec] = spec["ui"]
        presenter.ui(
            lambda item, ctx: [
                item_block(s, item) if "when" not in s or holds(s["when"], item, ctx) else None for s in item_specs
            ]
        )
    if "collection_ui" in spec:
        list_specs: list[Spec] = spec["collection_ui"]

        def collection(items: list[Any], ctx: Any) -> list[UiBlock | None]:
            first = items[0] if items else None
            return [
                collection_block(s, items) if "when" not in s or holds(s["when"], first, ctx) else None
                for s in list_specs
            ]

        presenter.collection_ui(collection)
    if "redact" in spec:
        presenter.redact(spec["redact"]["paths"], make_censor(spec["redact"].get("censor", "[REDACTED]")))
    for embed in spec.get("embed", []):
        presenter.embed(embed["key"], build_presenter(embed["presenter"]))
    return presenter


@pytest.mark.parametrize("case", cases("presenter"), ids=case_id)
def test_presenter_vector(case: Spec) -> None:
    given = case["input"]
    select = given.get("select")
    keys = select if isinstance(select, list) and select and all(isinstance(k, str) for k in select) else None
    builder = build_presenter(given["presenter"]).make(given["data"], given.get("ctx"), keys)
    for hint in given.get("hints", []):
        builder.llm_hint(hint)
    assert_result(builder.build(), case["expect"])


@pytest.mark.parametrize("case", cases("pipeline_error"), ids=case_id)
async def test_pipeline_error_vector(case: Spec) -> None:
    given = case["input"]

    def handler() -> str:
        if "raises" in given:
            raise RuntimeError(given["raises"])
        return "OK"

    if given["actions"] is None:
        tool = Tool(given["tool"], description="A tool.", handler=handler)
    else:
        tool = Tool(given["tool"], description="A tool.")
        for name in given["actions"]:
            tool.action(name, handler)
    registry = ToolRegistry()
    registry.add(tool)
    result = await registry.call(given.get("call", given["tool"]), given["args"])
    assert_result(result, case["expect"])


@pytest.mark.parametrize("case", cases("toon_description"), ids=case_id)
def test_toon_description_vector(case: Spec) -> None:
    given = case["input"]
    tool = Tool("projects", description=given["description"])
    for spec in given["actions"]:
        fields: dict[str, Any] = {name: (str, ...) for name in spec["required"]}
        model = create_model(f"In_{spec['action']}", **fields)
        tool.action(
            spec["action"],
            lambda params: None,  # pyright: ignore[reportUnknownLambdaType]
            input=model,
            description=spec["desc"],
            destructive=spec.get("destructive", False),
        )
    tool.toon_description()
    assert [tool.description] == case["expect"]["content"]
    assert case["expect"]["isError"] is None and case["expect"]["meta"] is None
