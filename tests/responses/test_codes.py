"""The framework's error registry: one entry per code and case, whose texts every envelope of that code uses."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

import webapp
from webapp.bridge import ViewError
from webapp.bridge.errors import ViewErrorCode
from webapp.responses import ERROR_CODES, error_code, framework_error
from webapp.wire import ToolErrorBlock, parse_blocks


def test_every_view_error_code_is_registered_and_its_envelope_carries_the_registry_texts() -> None:
    for code in get_args(ViewErrorCode):
        entry = error_code(code)
        envelope = ViewError(code, "notes", view="v1", seconds=2.5, limit=3).result()
        (block,) = parse_blocks([part.text for part in envelope.content if part.type == "text"])
        assert isinstance(block, ToolErrorBlock)
        assert (block.code, block.severity) == (code, "error")
        assert (block.message, block.recovery) == entry.texts(app="notes", view="v1", seconds="2.5", limit=3)


def test_a_framework_error_fills_its_templates_and_keeps_the_registered_recovery() -> None:
    result = framework_error("SERVER_STOPPING", "stopped", tool="notes_add", grace="10")
    (block,) = parse_blocks([part.text for part in result.content if part.type == "text"])
    assert isinstance(block, ToolErrorBlock)
    assert block.message == (
        "The server stopped before 'notes_add' finished (10 seconds after the stop); the action may not have run."
    )
    assert block.recovery == "Retry in a few seconds with the same _call_id."
    assert result.is_error


def test_a_missing_template_value_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="UNKNOWN_ACTION error needs the values action"):
        framework_error("UNKNOWN_ACTION")


def test_an_unregistered_code_is_refused_with_the_codes_there_are() -> None:
    with pytest.raises(KeyError, match=r"no framework error 'VIEW_GONE'.*VIEW_CLOSED"):
        error_code("VIEW_GONE")


def test_each_code_has_one_default_case_and_every_entry_says_when_it_happens() -> None:
    codes = {code for code, _ in ERROR_CODES}
    assert all((code, "") in ERROR_CODES for code in codes)
    assert all(entry.when.endswith(".") and entry.message for entry in ERROR_CODES.values())


def test_every_error_code_the_framework_writes_is_registered() -> None:
    calls = re.compile(r'(?:tool_error|framework_error|ViewError|_discriminator_error)\(\s*"([A-Z][A-Z_]+)"')
    written = {code for path in Path(webapp.__file__).parent.rglob("*.py") for code in calls.findall(path.read_text())}
    assert written >= {"VIEW_CLOSED", "UNKNOWN_TOOL", "SERVER_STOPPING", "TUNNEL_UNKNOWN", "INSUFFICIENT_SCOPE"}
    assert written <= {code for code, _ in ERROR_CODES}
