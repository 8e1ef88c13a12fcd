"""What must hold after every fuzz case: the answer is a tool result in the wire format (or a JSON-RPC answer over
HTTP), and the bridge's view registry is consistent — indexes, states, tabs, owners, the per-caller limit and the
rows persisted in the database. Each check returns a list of problems (empty when all holds).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types

from webapp.bridge.dispatch import Bridge
from webapp.bridge.registry import OPEN_STATES, ViewState
from webapp.core.sql import Database, open_database
from webapp.wire import parse_blocks
from webapp.wire.parse import DataBlock, ToolErrorBlock, ValidationErrorBlock

__all__ = ["FuzzTally", "RegistryChecker", "jsonrpc_problems", "outcome_of", "result_problems", "sse_lines"]

_CODE = re.compile(r"^[A-Z][A-Z0-9_]{2,40}$")
_MIN_HANDLE, _MIN_KEY = 22, 43  # token_urlsafe(16) and token_urlsafe(32): 128 and 256 bits


@dataclass
class FuzzTally:
    """Counts of one fuzz run; `broken` holds the first problems found (for the assertion message)."""

    name: str
    cases: int = 0
    crashes: int = 0
    server_errors: int = 0
    invariant_breaks: int = 0
    outcomes: Counter[str] = field(default_factory=Counter[str])
    broken: list[str] = field(default_factory=lambda: [])

    def add(self, outcome: str, *, crash: Sequence[str] = (), invariants: Sequence[str] = ()) -> None:
        self.cases += 1
        self.outcomes[outcome] += 1
        if crash:
            self.crashes += 1
        if outcome.startswith("http 5"):
            self.server_errors += 1
        if invariants:
            self.invariant_breaks += 1
        if (crash or invariants) and len(self.broken) < 10:
            self.broken.append(f"{outcome}: {[*crash, *invariants]}"[:600])

    @property
    def clean(self) -> bool:
        return self.crashes == 0 and self.server_errors == 0 and self.invariant_breaks == 0

    def report(self) -> str:
        common = ", ".join(f"{name} {count}" for name, count in self.outcomes.most_common(8))
        return (
            f"{self.name}: {self.cases} cases, {self.crashes} crashes, {self.server_errors} HTTP 5xx, "
            f"{self.invariant_breaks} broken invariants ({common})"
        )


def outcome_of(result: mcp_types.CallToolResult) -> str:
    """A short label of a tool result: `ok`, the tool error code, or `validation_error`."""
    if not result.is_error:
        return "ok"
    text = next((block.text for block in result.content if isinstance(block, mcp_types.TextContent)), "")
    found = re.match(r'<tool_error code="([A-Z_0-9]+)"', text)
    return found.group(1) if found else ("validation_error" if text.startswith("<validation_error") else "error")


def result_problems(result: Any, *, crash_allowed: bool = False) -> list[str]:
    """A tool result must be a `CallToolResult` of text blocks in the wire format; an error result starts with a
    `<tool_error>` or `<validation_error>` envelope that renders back exactly; INTERNAL_ERROR is a crash."""
    if not isinstance(result, mcp_types.CallToolResult):
        return [f"not a CallToolResult: {type(result).__name__}"]
    texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
    problems: list[str] = []
    if not result.content:
        problems.append("no content")
    if len(texts) != len(result.content):
        problems.append("a non-text block")
    if any("Traceback (most recent call last)" in text for text in texts):
        problems.append("a traceback in the answer")
    if not texts:
        return problems
    first = parse_blocks(texts)[0]
    if result.is_error:
        if not isinstance(first, ToolErrorBlock | ValidationErrorBlock):
            problems.append(f"an error result without an envelope: {texts[0][:200]!r}")
        elif isinstance(first, ToolErrorBlock):
            if first.code is None or not _CODE.match(first.code):
                problems.append(f"a tool error code {first.code!r}")
            if first.code == "INTERNAL_ERROR" and not crash_allowed:
                problems.append(f"INTERNAL_ERROR: {first.message[:300]}")
    elif not isinstance(first, DataBlock):
        problems.append(f"a success whose first block is {type(first).__name__}")
    return problems


def sse_lines(text: str) -> list[str]:
    """The lines of an event stream: only CR, LF and CRLF end one (`str.splitlines` also splits at U+2028 and
    other characters that JSON text may carry unescaped)."""
    return re.split(r"\r\n|\r|\n", text)


def jsonrpc_problems(status: int, content_type: str, body: bytes) -> list[str]:
    """An HTTP answer of `/mcp`: never 5xx, never a traceback; JSON bodies are JSON-RPC answers (or auth errors)."""
    problems: list[str] = []
    if status >= 500:
        problems.append(f"HTTP {status}: {body[:200]!r}")
    if b"Traceback" in body:
        problems.append("a traceback in the body")
    if content_type.startswith("application/json") and body:
        try:
            value = json.loads(body)
        except ValueError:
            problems.append(f"a JSON content type with a body that is not JSON: {body[:100]!r}")
            return problems
        messages = value if isinstance(value, list) else [value]
        for message in messages:
            if not isinstance(message, dict):
                problems.append(f"a JSON answer that is no object: {body[:100]!r}")
            elif "jsonrpc" in message and not ({"result", "error"} & set(message)):
                problems.append(f"a JSON-RPC answer without result or error: {body[:100]!r}")
            elif "jsonrpc" not in message and "error" not in message:
                problems.append(f"a JSON answer that is neither JSON-RPC nor an error: {body[:100]!r}")
    elif content_type.startswith("text/event-stream"):
        for line in sse_lines(body.decode("utf-8", "replace")):
            if line.startswith("data:") and line[5:].strip():
                try:
                    json.loads(line[5:].strip())
                except ValueError:
                    problems.append(f"an SSE event that is not JSON: {line[:100]!r}")
    return problems


class RegistryChecker:
    """Checks the bridge's view registry; remembers each view's first principal (a view never changes owner)."""

    def __init__(self, bridge: Bridge, db: Path | str) -> None:
        self.bridge = bridge
        self._db = db
        self._conn: Database | None = None  # a connection of the checker's own, opened at its first check
        self.owners: dict[str, str | None] = {}
        self.checks = 0

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def problems(self) -> list[str]:
        self.checks += 1
        registry = self.bridge.registry
        views = list(registry)
        problems: list[str] = []
        handles = [view.handle for view in views]
        keys = [view.attach_key for view in views]
        if len(set(handles)) != len(handles) or len(set(keys)) != len(keys) or set(handles) & set(keys):
            problems.append("a handle or attach key is not unique")
        clients = [id(view.client) for view in views if view.client is not None]
        if len(set(clients)) != len(clients):
            problems.append("one tab is attached to two views")
        open_by_owner: Counter[str] = Counter()
        for view in views:
            name = repr(view)
            if registry.by_handle(view.handle) is not view or registry.by_attach_key(view.attach_key) is not view:
                problems.append(f"{name}: not found by its own handle or key")
            if len(view.handle) < _MIN_HANDLE or len(view.attach_key) < _MIN_KEY:
                problems.append(f"{name}: a secret shorter than 128 bits")
            if view.state is ViewState.EXPIRED:
                problems.append(f"{name}: expired but still registered")
            if view.state is ViewState.LIVE and view.client is None:
                problems.append(f"{name}: live without a tab")
            if view.client is not None and view.client.is_deleted:
                problems.append(f"{name}: attached to a deleted tab")
            if view.state in (ViewState.CLOSED, ViewState.REPLACED) and view.client is not None:
                problems.append(f"{name}: {view.state} but still attached")
            if view.app not in self.bridge.apps:
                problems.append(f"{name}: of an unknown app")
            first = self.owners.setdefault(view.handle, view.principal)
            if first is not None and view.principal != first:
                problems.append(f"{name}: changed owner from {first!r} to {view.principal!r}")
            if view.state in OPEN_STATES and view.principal is not None:
                open_by_owner[view.principal] += 1
        limit = self.bridge.settings.max_views
        problems += [f"{owner} has {n} open views (limit {limit})" for owner, n in open_by_owner.items() if n > limit]
        if self._conn is None:
            self._conn = open_database(self._db)
        rows = self._conn.execute("SELECT handle, attach_key, principal FROM webapp_views").fetchall()
        stored = {str(row[0]): (row[1], row[2]) for row in rows}  # every row is written before its view is known
        if set(stored) != set(handles):
            problems.append(f"{len(stored)} stored views vs {len(handles)} registered")
        for view in views:
            row = stored.get(view.handle)
            if row is not None and row != (view.attach_key, view.principal):
                problems.append(f"{view!r}: stored with another key or principal")
        return problems
