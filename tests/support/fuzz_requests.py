"""Hypothesis strategies for raw HTTP requests to `/mcp`: well-formed and malformed JSON-RPC bodies (both protocol
eras, batches, odd ids, `_meta` oddities, generated tool arguments) and headers (auth, session ids, protocol
versions, method headers, content types, Host and Origin), plus how to send one in process and read the answer.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx2
from hypothesis import strategies as st

from tests.support.fuzz_invariants import sse_lines
from tests.support.fuzz_strategies import invalid_arguments, json_values, valid_arguments

__all__ = [
    "JSON_ACCEPT",
    "LEGACY",
    "MODERN",
    "Peers",
    "RawRequest",
    "call_in_session",
    "call_sessionless",
    "jsonrpc_result",
    "open_session",
    "requests",
    "send",
]

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
JSON_ACCEPT = "application/json, text/event-stream"


@dataclass(frozen=True)
class Peers:
    """What the requests may name: tools with their schemas, tokens and session ids (own, foreign, ended)."""

    tools: Mapping[str, Mapping[str, Any]]
    tokens: Sequence[str]
    sessions: Sequence[str]
    host: str
    origin: str


@dataclass(frozen=True)
class RawRequest:
    method: str
    headers: dict[str, str] = field(default_factory=lambda: {})
    body: bytes = b""
    label: str = ""

    @property
    def is_tool_call(self) -> bool:
        return self.label.startswith("tools/call")


def _meta(version: str) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


ids: st.SearchStrategy[Any] = st.one_of(
    st.integers(min_value=0, max_value=2**31),
    st.text(max_size=10),
    st.none(),
    st.just(2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "notifications/initialized",
    "notifications/cancelled",
    "resources/list",
    "prompts/get",
    "logging/setLevel",
    "subscriptions/listen",
]


@st.composite
def _tool_call(draw: st.DrawFn, peers: Peers) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(peers.tools)) | st.text(max_size=12))
    schema = peers.tools.get(name, {"type": "object", "properties": {}})
    arguments = draw(st.one_of(valid_arguments(schema), invalid_arguments(schema), json_values))
    return name, {"name": name, "arguments": arguments}


@st.composite
def _message(draw: st.DrawFn, peers: Peers, version: str, *, call: bool = False) -> tuple[str, dict[str, Any]]:
    method = "tools/call" if call else draw(st.sampled_from(METHODS) | st.text(max_size=16))
    label = method
    params: Any
    if method == "tools/call":
        name, params = draw(_tool_call(peers))
        label = f"tools/call {name if name in peers.tools else '(unknown tool)'}"
    elif method == "initialize":
        params = {
            "protocolVersion": draw(st.sampled_from([LEGACY, "2024-11-05", "1999-01-01", ""])),
            "capabilities": {},
        }
        params["clientInfo"] = {"name": "fuzz", "version": "0"}
    else:
        params = draw(st.one_of(st.just({}), st.dictionaries(st.text(max_size=6), json_values, max_size=3)))
    if version == MODERN and isinstance(params, dict) and (call or draw(st.booleans())):
        odd_meta = st.one_of(st.just(_meta("2031-01-01")), json_values)
        params["_meta"] = _meta(MODERN) if call else draw(st.one_of(st.just(_meta(MODERN)), odd_meta))
    if not call and draw(st.integers(min_value=0, max_value=9)) == 0:
        params = draw(json_values)
    message: dict[str, Any] = {"jsonrpc": "2.0" if call else draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]))}
    if call or not method.startswith("notifications/") or draw(st.booleans()):
        message["id"] = draw(st.integers(min_value=1, max_value=2**31) if call else ids)
    message["method"] = method
    if call or draw(st.integers(min_value=0, max_value=5)):
        message["params"] = params
    return label, message


_BROKEN_BODIES = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64).map(str.encode),
    st.sampled_from(
        [
            b"",
            b"{",
            b"null",
            b"[]",
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{"t":"\\ud800"}}}',
            b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":' + b"9" * 5000 + b"}}",
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 300 + b"]" * 300 + b"}",
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}' * 2,
            b"\xef\xbb\xbf" + b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}',
        ]
    ),
    st.integers(min_value=1, max_value=80).map(lambda n: b'{"jsonrpc":"2.0","id":1,"method":"ping"}'[:n]),
)


def _header(draw: st.DrawFn, good: Sequence[str], junk: st.SearchStrategy[str], *, clean: bool) -> str | None:
    """One of `good` (always when `clean`); else sometimes absent or junk."""
    roll = 0 if clean else draw(st.integers(min_value=0, max_value=9))
    if roll < 7 and good:
        return draw(st.sampled_from(list(good)))
    if clean:
        return None
    return None if roll < 8 else draw(junk)


_ASCII = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=40)
_CONTENT_TYPES = st.sampled_from(["text/plain", "application/json;x", "application/x-www-form-urlencoded"])
_ACCEPTS = st.sampled_from(["application/json", "text/event-stream", "*/*"])
_VERSIONS = st.sampled_from(["2024-11-05", "2099-01-01", "x"])


@st.composite
def requests(draw: st.DrawFn, peers: Peers) -> RawRequest:
    """One request to `/mcp`."""
    version = draw(st.sampled_from([LEGACY, LEGACY, MODERN]))
    clean = draw(st.integers(min_value=0, max_value=4)) < 2  # well-formed headers around a generated tool call
    label, body = "broken body", b""
    shape = "call" if clean else draw(st.sampled_from(["message", "message", "message", "batch", "json", "broken"]))
    method_header = name_header = None
    if shape in ("message", "call"):
        label, message = draw(_message(peers, version, call=shape == "call"))
        body = json.dumps(message).encode()
        method_header = str(message.get("method"))
        params = message.get("params")
        name_header = str(params.get("name")) if isinstance(params, dict) and "name" in params else None
    elif shape == "batch":
        items = draw(st.lists(_message(peers, version), min_size=0, max_size=3))
        label, body = "batch", json.dumps([message for _, message in items]).encode()
    elif shape == "json":
        label, body = "json value", json.dumps(draw(json_values)).encode()
    else:
        body = draw(_BROKEN_BODIES)
    headers: dict[str, str] = {}
    modern = version == MODERN
    tokens = peers.tokens[:1] if clean else peers.tokens  # clean: the first token with the session it opened
    sessions = list(peers.sessions[:1] if clean else peers.sessions) if not modern else []
    optional = {
        "Authorization": _header(draw, [f"Bearer {token}" for token in tokens], _ASCII, clean=clean),
        "Content-Type": _header(draw, ["application/json"], _CONTENT_TYPES, clean=clean),
        "Accept": _header(draw, [JSON_ACCEPT], _ACCEPTS, clean=clean),
        "MCP-Protocol-Version": _header(draw, [version], _VERSIONS, clean=clean),
        "Mcp-Session-Id": _header(draw, sessions, _ASCII, clean=clean),
        "Mcp-Method": _header(draw, [method_header] if modern and method_header else [], _ASCII, clean=clean),
        "Mcp-Name": _header(draw, [name_header] if modern and name_header else [], _ASCII, clean=clean),
        "Origin": _header(draw, [], st.sampled_from([peers.origin, "http://evil.example", "null"]), clean=clean),
    }
    headers.update({name: value for name, value in optional.items() if value is not None})
    if not clean and draw(st.integers(min_value=0, max_value=19)) == 0:
        headers["Host"] = draw(st.sampled_from(["evil.example", "127.0.0.1:1", peers.host.upper()]))
    http_method = "POST" if clean else draw(st.sampled_from(["POST"] * 12 + ["GET", "DELETE", "PUT", "OPTIONS"]))
    if http_method == "GET" and headers.get("Accept", "").endswith("event-stream"):
        headers["Accept"] = "application/json"  # an accepted GET opens a stream that never ends on its own
    return RawRequest(http_method, headers, body, label)


async def send(http: httpx2.AsyncClient, request: RawRequest) -> httpx2.Response:
    """Send `request` (header values go out as UTF-8 bytes, so names copied from a body may be any text)."""
    headers = [(name.encode(), value.encode()) for name, value in request.headers.items()]
    return await http.request(request.method, "/mcp", content=request.body, headers=headers)


def jsonrpc_result(response: httpx2.Response) -> dict[str, Any] | None:
    """The `result` of a single JSON-RPC answer, from a JSON or SSE body (None when there is none)."""
    content_type = response.headers.get("content-type", "")
    texts: list[str] = []
    if content_type.startswith("application/json"):
        texts = [response.text]
    elif content_type.startswith("text/event-stream"):
        texts = [line[5:].strip() for line in sse_lines(response.text) if line.startswith("data:")]
    for text in texts:
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("result"), dict):
            return value["result"]
    return None


def _request_id() -> int:
    """A fresh JSON-RPC id: requests in flight at once in one session must not share one (the SDK routes each
    answer to the stream of its id, so a reused id leaves the earlier request without an answer)."""
    return secrets.randbelow(2**53)


async def open_session(http: httpx2.AsyncClient, token: str) -> str:
    """A legacy (2025-11-25) session opened by hand: initialize, then notifications/initialized."""
    headers = {"Authorization": f"Bearer {token}", "Accept": JSON_ACCEPT, "Content-Type": "application/json"}
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    response = await http.post("/mcp", json=initialize, headers=headers)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    headers |= {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY}
    done = await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert done.status_code == 202, done.text
    return session_id


async def call_in_session(
    http: httpx2.AsyncClient, token: str, session_id: str, name: str, arguments: dict[str, Any]
) -> httpx2.Response:
    """A well-formed `tools/call` in a legacy session."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": JSON_ACCEPT,
        "Content-Type": "application/json",
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": LEGACY,
    }
    params = {"name": name, "arguments": arguments}
    body = {"jsonrpc": "2.0", "id": _request_id(), "method": "tools/call", "params": params}
    return await http.post("/mcp", json=body, headers=headers)


async def call_sessionless(
    http: httpx2.AsyncClient, token: str, name: str, arguments: dict[str, Any]
) -> httpx2.Response:
    """A well-formed 2026-07-28 `tools/call` (no session)."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": JSON_ACCEPT,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    params = {"name": name, "arguments": arguments, "_meta": _meta(MODERN)}
    body = {"jsonrpc": "2.0", "id": _request_id(), "method": "tools/call", "params": params}
    return await http.post("/mcp", json=body, headers=headers)
