"""The viewer's pure parts: filters and links, the schema-generated form (the renderer's in tests/static)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.viewer_app import FORM_SCHEMA
from webapp.calllog.memory import CallRecord
from webapp.core.settings import SettingsError
from webapp.core.static import VIEWER_BUNDLE, require_bundle
from webapp.viewer import Access, Filters, viewer_url
from webapp.viewer.filters import call_key, call_ref
from webapp.viewer.page import caller_label
from webapp.viewer.try_panel import FieldSpec, FormError, collect_arguments, schema_fields


def _record(**changes: Any) -> CallRecord:
    values: dict[str, Any] = {
        "seq": 1,
        "time": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "tool": "report",
        "arguments": {},
        "blocks": ("OK",),
        "is_error": False,
        "structured_content": None,
        "duration_ms": 1.5,
        "principal": None,
        "session_id": None,
        "protocol": "2026-07-28",
        "view": None,
    }
    values.update(changes)
    return CallRecord(**values)


def test_filters_round_trip_through_the_query_string() -> None:
    filters = Filters(tool="report", view="abcdefghijkl", session="0123456789", errors=True)
    assert filters.view == "abcdef" and filters.session == "012345"
    query = filters.query(call=7)
    assert query == "tool=report&view=abcdef&session=012345&errors=1&call=7"
    assert Filters.from_query({"tool": "report", "view": "abcdef", "session": "012345", "errors": "1"}) == filters


def test_a_link_names_a_call_by_its_seq_and_with_several_workers_by_its_worker_too() -> None:
    assert call_ref(("", 7)) == "7" and call_ref(("w-2.b", 7)) == "w-2.b:7"
    assert call_key("w-2.b:7", "w1") == ("w-2.b", 7)
    assert call_key("7", "w1") == ("w1", 7)  # a bare seq: one of this worker's calls
    assert call_key("7", "") == ("", 7)
    for bad in ("", "w1:", "w1:x", "-3", "٣", "w1:7:"):
        assert call_key(bad, "w1") is None, bad


def test_filters_match_the_masked_view_and_session() -> None:
    record = _record(view="abcdef…", session_id="012345…", is_error=True)
    assert Filters(view="abcdef…").matches(record)
    assert Filters(view="abcdefXYZ", session="0123", errors=True, tool="report").matches(record)
    assert not Filters(view="abcdeg").matches(record)
    assert not Filters(tool="other").matches(record)
    assert not Filters(errors=True).matches(_record())


def test_a_viewer_link_carries_only_the_masked_prefix_of_a_view_handle() -> None:
    handle = "Zx8_secret-handle-value"
    assert viewer_url(handle) == "/viewer?view=Zx8_se"
    assert viewer_url() == "/viewer"
    assert handle not in viewer_url(handle, tool="inventory")


def test_with_auth_on_a_principal_sees_only_its_own_calls() -> None:
    alice = Access(principal="alice", token="t")
    assert alice.may_see(_record(principal="alice"))
    assert not alice.may_see(_record(principal="bob"))
    assert not alice.may_see(_record(principal=None))
    assert Access().may_see(_record(principal="bob"))


def test_the_caller_is_the_principal_else_the_session_else_sessionless() -> None:
    assert caller_label(_record(principal="alice", session_id="abc…")) == "alice"
    assert caller_label(_record(session_id="abcdef…")) == "session abcdef…"
    assert caller_label(_record()) == "sessionless"
    assert caller_label(_record(protocol="stdio", session_id="stdio")) == "stdio"


def test_form_fields_follow_the_input_schema() -> None:
    fields = {spec.name: spec for spec in schema_fields(FORM_SCHEMA)}
    assert [(n, s.kind, s.required) for n, s in fields.items()] == [
        ("text", "string", True),
        ("count", "integer", False),
        ("ratio", "number", False),
        ("flag", "boolean", False),
        ("color", "enum", False),
        ("tags", "json", False),
        ("_view", "view", False),
    ]
    assert fields["count"].default == 2 and fields["color"].options == ("red", "green")
    assert fields["text"].description == "Some text."


def test_form_fields_resolve_refs_and_multi_select_enums() -> None:
    schema = {
        "type": "object",
        "properties": {
            "mode": {"$ref": "#/$defs/Mode"},
            "_select": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "where": {"type": "object"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "$defs": {"Mode": {"enum": ["fast", "slow"], "type": "string"}},
    }
    kinds = {spec.name: (spec.kind, spec.options) for spec in schema_fields(schema)}
    assert kinds == {
        "mode": ("enum", ("fast", "slow")),
        "_select": ("multi", ("a", "b")),
        "where": ("json", ()),
        "either": ("json", ()),
    }


def test_collecting_arguments_converts_values_and_leaves_out_empty_optional_fields() -> None:
    fields = schema_fields(FORM_SCHEMA)
    values = {"text": "hi", "count": 3.0, "ratio": None, "flag": True, "color": None, "tags": '["a", 1]', "_view": None}
    assert collect_arguments(fields, values) == {"text": "hi", "count": 3, "flag": True, "tags": ["a", 1]}


@pytest.mark.parametrize(
    ("values", "field"),
    [({"text": None}, "text"), ({"text": "x", "count": 2.5}, "count"), ({"text": "x", "tags": "[1,"}, "tags")],
)
def test_collecting_arguments_names_the_field_that_cannot_be_sent(values: dict[str, Any], field: str) -> None:
    with pytest.raises(FormError) as raised:
        collect_arguments(schema_fields(FORM_SCHEMA), values)
    assert raised.value.field == field


def test_a_required_empty_string_is_sent_as_empty() -> None:
    spec = FieldSpec(name="s", kind="string", required=True)
    assert collect_arguments([spec], {"s": ""}) == {"s": ""}


def test_a_missing_browser_bundle_is_refused_with_what_to_run() -> None:
    with pytest.raises(SettingsError, match=r"'dist/no-such\.js' is not built .*run 'make run'"):
        require_bundle("dist/no-such.js")
    assert require_bundle(VIEWER_BUNDLE).is_file()
