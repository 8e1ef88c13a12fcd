"""Every wire-format vector of the builder, success, error and parse kinds passes byte for byte."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import mcp_types
import pytest
from pydantic import BaseModel, create_model

from tests.support.wire_vectors import COPY, SPEC, assert_result, case_id, cases
from webapp import (
    Suggestion,
    UiBlock,
    error,
    error_builder,
    required,
    response,
    success,
    success_structured,
    tool_error,
    toon_success,
    ui,
)
from webapp.wire import parse_blocks, render_blocks

_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "object": dict[str, Any]}


def model_from(spec: dict[str, Any], name: str = "Model") -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for field_name, field in spec["fields"].items():
        kind = field["type"]
        if kind == "object" and "fields" in field:
            annotation: Any = model_from(field, f"{name}_{field_name}")
        elif kind == "list":
            annotation = list[model_from(field, f"{name}_{field_name}")] if "fields" in field else list[Any]
        else:
            annotation = _TYPES[kind]
        fields[field_name] = (annotation | None, None) if field.get("optional") else (annotation, ...)
    return create_model(name, **fields)


def _data(spec: dict[str, Any]) -> Any:
    return model_from(spec["model"]).model_validate(spec["data"]) if "model" in spec else spec["data"]


def _ui_block(spec: dict[str, Any]) -> UiBlock:
    attrs = {key: spec[key] for key in ("title", "width", "priority") if key in spec}
    if spec["helper"] == "block":
        return UiBlock(*spec["args"], **attrs)
    return getattr(ui, spec["helper"])(*spec["args"], **attrs)


def _built_by_builder(spec: dict[str, Any]) -> mcp_types.CallToolResult:
    builder = response(spec["data"])
    queues = {kind: list(spec.get(kind, [])) for kind in ("ui", "raw", "hints", "rules", "suggestions")}
    order = spec.get("order") or [kind for kind, items in queues.items() for _ in items]
    for kind in order:
        item = queues[kind].pop(0)
        if kind == "ui":
            builder.ui_block(_ui_block(item))
        elif kind == "raw":
            builder.raw_block(item)
        elif kind == "hints":
            builder.llm_hint(item)
        elif kind == "rules":
            builder.rules([item])
        else:
            builder.suggest([None if item is None else Suggestion(*item)])
    assert not any(queues.values()), "the case's order must use every operation"
    return builder.build()


def _built(spec: dict[str, Any]) -> mcp_types.CallToolResult:
    kind = spec["kind"]
    if kind == "builder":
        return _built_by_builder(spec)
    if kind == "success":
        return success(_data(spec))
    if kind == "success_structured":
        return success_structured(_data(spec))
    if kind == "toon_success":
        return toon_success(_data(spec))
    if kind == "error":
        return error(spec["message"], spec["code"]) if "code" in spec else error(spec["message"])
    if kind == "required":
        return required(spec["field"])
    if kind == "tool_error":
        return tool_error(spec["code"], **spec["options"])
    builder = error_builder(spec["code"], spec["message"])
    for method, *args in spec["steps"]:
        getattr(builder, method)(*args)
    return builder.build()


RESULT_KINDS = ("builder", "success", "success_structured", "toon_success", "error", "required", "tool_error")


@pytest.mark.parametrize("case", cases(*RESULT_KINDS, "error_builder"), ids=case_id)
def test_result_vector_passes_byte_for_byte(case: dict[str, Any]) -> None:
    assert_result(_built(case["input"]), case["expect"])


@pytest.mark.parametrize("case", cases("parse"), ids=case_id)
def test_parse_vector_passes(case: dict[str, Any]) -> None:
    parsed = parse_blocks(case["input"]["content"])
    assert json.loads(json.dumps([dataclasses.asdict(block) for block in parsed])) == case["expect"]["parsed"]
    assert render_blocks(parsed) == case["expect"]["content"] == case["input"]["content"]


def test_the_vectors_copy_matches_the_spec_when_the_spec_is_present() -> None:
    if SPEC.exists():
        assert COPY.read_bytes() == SPEC.read_bytes(), "the spec's wire-vectors.json moved: update the copy and code"


def test_every_built_result_renders_back_from_its_parsed_blocks() -> None:
    for case in cases(*RESULT_KINDS, "error_builder"):
        texts = case["expect"]["content"]
        assert render_blocks(parse_blocks(texts)) == texts
